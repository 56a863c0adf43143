// Exact amounts, the marketplace's fee and the postings a payment calls for: pure functions, no server.
import { describe, expect, it } from 'vitest';
import { AmountError, formatMinor, percentOf, sum, toMinor, toNumber } from '../../src/money/amount.ts';
import { feeRefusal, scheduledFee, NO_FEE } from '../../src/money/fee.ts';
import { paymentPostings, unbalanced, type PaymentMoney } from '../../src/money/ledger.ts';
import { moneyJson } from '../../src/money/json.ts';

describe('amounts in minor units', () => {
  it('reads decimals of at most two places, from text or from the JSON number, exactly', () => {
    expect(toMinor('1234.56')).toBe(123456n);
    expect(toMinor('1234.5')).toBe(123450n);
    expect(toMinor('0.07')).toBe(7n);
    expect(toMinor('-0.07')).toBe(-7n);
    expect(toMinor('12.50')).toBe(1250n);
    expect(toMinor(2500)).toBe(250000n);
    expect(toMinor(0.1)).toBe(10n);
    expect(toMinor(1234.56)).toBe(123456n);
    // The largest amount the API takes, with its cents: a double holds it exactly.
    expect(toMinor(9999999999999.99)).toBe(999999999999999n);
    expect(toMinor(1e13)).toBe(1000000000000000n);
    expect(toMinor(5n)).toBe(500n);
  });

  it('refuses what is not such a decimal instead of rounding it', () => {
    for (const bad of ['1.234', '1e3', '', ' . ', 'abc', '1,5', '0x10'])
      expect(() => toMinor(bad), bad).toThrow(AmountError);
    for (const bad of [0.1 + 0.2, 1.005, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 1e-7])
      expect(() => toMinor(bad), String(bad)).toThrow(AmountError);
  });

  it('writes minor units with two decimals, and back as the JSON number', () => {
    expect(formatMinor(123456n)).toBe('1234.56');
    expect(formatMinor(5n)).toBe('0.05');
    expect(formatMinor(0n)).toBe('0.00');
    expect(formatMinor(-250000n)).toBe('-2500.00');
    expect(toNumber(123450n)).toBe(1234.5);
    expect(toNumber(-7n)).toBe(-0.07);
    expect(toNumber(0n)).toBe(0);
    expect(Object.is(toNumber(0n), 0)).toBe(true);
    expect(JSON.stringify(toNumber(999999999999999n))).toBe('9999999999999.99');
  });

  it('adds where floating point would not: 0.1 + 0.2 is 0.30', () => {
    expect(formatMinor(toMinor(0.1) + toMinor(0.2))).toBe('0.30');
    expect(formatMinor(sum(Array.from({ length: 10 }, () => toMinor('0.10'))))).toBe('1.00');
    // Round trips of every cent of a rouble, and of large amounts.
    for (let cents = 0n; cents < 100n; cents++) {
      const minor = 123456789012300n + cents;
      expect(toMinor(toNumber(minor))).toBe(minor);
      expect(toMinor(formatMinor(minor))).toBe(minor);
    }
  });

  it('takes a percentage rounded half-up to the kopeck', () => {
    expect(percentOf(10000n, 2.5)).toBe(250n); // 2.5 % of 100.00 is 2.50
    expect(percentOf(100n, 2.5)).toBe(3n); // 2.5 % of 1.00 is 0.025: half a kopeck goes up
    expect(percentOf(99n, 2.5)).toBe(2n); // 0.02475 goes down
    expect(percentOf(1n, 50)).toBe(1n); // 0.005 goes up
    expect(percentOf(1n, 49.99)).toBe(0n);
    expect(percentOf(-100n, 2.5)).toBe(-3n); // halves away from zero
    expect(percentOf(123456n, '0')).toBe(0n);
    expect(percentOf(123456n, '100')).toBe(123456n);
    expect(percentOf(999999999999999n, '33.33')).toBe(333299999999999n + 1n);
    expect(() => percentOf(100n, '-1')).toThrow(AmountError);
    expect(() => percentOf(100n, '1.1234567')).toThrow(AmountError);
  });
});

describe('JSON with exact amounts', () => {
  it('writes minor units as decimals with two places, whatever their size, and nothing else differently', () => {
    const body = {
      items: [{ amount: -123450n, zero: 0n, huge: 123456789012345678901n, text: 'a "quoted" \\u0000minor:1', n: 1.5 }],
    };
    const text = moneyJson(body);
    expect(text).toBe(
      '{"items":[{"amount":-1234.50,"zero":0.00,"huge":1234567890123456789.01,"text":"a \\"quoted\\" \\\\u0000minor:1","n":1.5}]}',
    );
    expect(JSON.parse(text).items[0]).toMatchObject({ amount: -1234.5, zero: 0, text: 'a "quoted" \\u0000minor:1' });
  });
});

describe('the fee', () => {
  const rub = (text: string) => toMinor(text);

  it('applies the schedule: percentage, fixed part, minimum and maximum, never more than the amount', () => {
    expect(scheduledFee(rub('1000'), NO_FEE)).toBe(0n);
    expect(scheduledFee(rub('1000'), { percent: 2.5, fixed: null, min: null, max: null })).toBe(rub('25'));
    expect(scheduledFee(rub('1000'), { percent: '2.50', fixed: '10.00', min: null, max: null })).toBe(rub('35'));
    expect(scheduledFee(rub('1000'), { percent: 1, fixed: 0, min: 50, max: 0 })).toBe(rub('50'));
    expect(scheduledFee(rub('100000'), { percent: 5, fixed: null, min: 50, max: 1000 })).toBe(rub('1000'));
    // A minimum above the maximum: the maximum wins.
    expect(scheduledFee(rub('1000'), { percent: null, fixed: null, min: 300, max: 200 })).toBe(rub('200'));
    // Never more than the amount: the seller's part is then 0.
    expect(scheduledFee(rub('30'), { percent: null, fixed: 50, min: null, max: null })).toBe(rub('30'));
    expect(scheduledFee(0n, { percent: 10, fixed: 50, min: 10, max: null })).toBe(0n);
    // Half-up on the percentage: 2.5 % of 10.99 is 0.27475.
    expect(scheduledFee(rub('10.99'), { percent: 2.5, fixed: null, min: null, max: null })).toBe(27n);
    // 3.3 % of 0.15 is 0.00495, half a kopeck rounds up to 0.01 only from 0.005.
    expect(scheduledFee(rub('0.15'), { percent: 3.3, fixed: null, min: null, max: null })).toBe(0n);
    expect(scheduledFee(rub('0.16'), { percent: 3.3, fixed: null, min: null, max: null })).toBe(1n);
  });

  it('takes a given fee of 0 up to less than the amount', () => {
    expect(feeRefusal(rub('100'), rub('99.99'))).toBeUndefined();
    expect(feeRefusal(rub('100'), 0n)).toBeUndefined();
    expect(feeRefusal(0n, 0n)).toBeUndefined();
    expect(feeRefusal(rub('100'), rub('100'))).toMatch(/less than the amount/);
    expect(feeRefusal(rub('100'), rub('100.01'))).toMatch(/less than the amount/);
    expect(feeRefusal(0n, 1n)).toMatch(/less than the amount/);
    expect(feeRefusal(rub('100'), -1n)).toMatch(/0 or more/);
  });
});

describe('postings of a payment', () => {
  const deal = { dealId: 'd1', fee: '25.00', feeMoment: 'close' as const };
  const payment = (status: PaymentMoney['status'], wasHeld = status !== 'pending'): PaymentMoney => ({
    id: 'p1',
    amount: '1000.00',
    currency: 'RUB',
    status,
    wasHeld,
  });
  const shape = (postings: ReturnType<typeof paymentPostings>) =>
    postings.map((posting) => [
      posting.cause,
      posting.kind,
      posting.entries.map((entry) => `${entry.account} ${formatMinor(entry.amount)}`),
    ]);

  it('moves nothing while pending, or when cancelled before the money was held', () => {
    expect(paymentPostings(deal, payment('pending'))).toEqual([]);
    expect(paymentPostings(deal, payment('refunded', false))).toEqual([]);
  });

  it('holds, then releases to the seller less the fee at close', () => {
    expect(shape(paymentPostings(deal, payment('hold')))).toEqual([
      ['p1/payment', 'payment', ['buyer -1000.00', 'deal_held:d1 1000.00']],
    ]);
    expect(shape(paymentPostings(deal, payment('disputed')))).toEqual([
      ['p1/payment', 'payment', ['buyer -1000.00', 'deal_held:d1 1000.00']],
    ]);
    expect(shape(paymentPostings(deal, payment('released')))).toEqual([
      ['p1/payment', 'payment', ['buyer -1000.00', 'deal_held:d1 1000.00']],
      ['p1/fee', 'fee', ['deal_held:d1 -25.00', 'marketplace_fee 25.00']],
      ['p1/release', 'payout', ['deal_held:d1 -975.00', 'seller_payable 975.00']],
    ]);
    expect(shape(paymentPostings(deal, payment('refunded')))).toEqual([
      ['p1/payment', 'payment', ['buyer -1000.00', 'deal_held:d1 1000.00']],
      ['p1/refund', 'refund', ['deal_held:d1 -1000.00', 'refunded 1000.00']],
    ]);
  });

  it('takes the fee at payment, and gives it back with a refund', () => {
    const early = { ...deal, feeMoment: 'payment' as const };
    expect(shape(paymentPostings(early, payment('hold')))).toEqual([
      ['p1/payment', 'payment', ['buyer -1000.00', 'deal_held:d1 1000.00']],
      ['p1/fee', 'fee', ['deal_held:d1 -25.00', 'marketplace_fee 25.00']],
    ]);
    expect(shape(paymentPostings(early, payment('released'))).map(([cause]) => cause)).toEqual([
      'p1/payment',
      'p1/fee',
      'p1/release',
    ]);
    expect(shape(paymentPostings(early, payment('refunded')))).toEqual([
      ['p1/payment', 'payment', ['buyer -1000.00', 'deal_held:d1 1000.00']],
      ['p1/fee', 'fee', ['deal_held:d1 -25.00', 'marketplace_fee 25.00']],
      ['p1/fee-reversal', 'reversal', ['marketplace_fee -25.00', 'deal_held:d1 25.00']],
      ['p1/refund', 'refund', ['deal_held:d1 -1000.00', 'refunded 1000.00']],
    ]);
  });

  it('leaves out movements of 0, and takes no more fee than the payment', () => {
    expect(shape(paymentPostings({ ...deal, fee: '0.00' }, payment('released'))).map(([cause]) => cause)).toEqual([
      'p1/payment',
      'p1/release',
    ]);
    expect(shape(paymentPostings({ ...deal, fee: '2000.00' }, payment('released')))).toEqual([
      ['p1/payment', 'payment', ['buyer -1000.00', 'deal_held:d1 1000.00']],
      ['p1/fee', 'fee', ['deal_held:d1 -1000.00', 'marketplace_fee 1000.00']],
    ]);
    expect(paymentPostings(deal, { ...payment('released'), amount: '0.00' })).toEqual([]);
  });

  it('balances every posting, and leaves the held account at 0 once the deal is closed', () => {
    for (const feeMoment of ['payment', 'close'] as const) {
      for (const status of ['hold', 'disputed', 'released', 'refunded'] as const) {
        const postings = paymentPostings({ ...deal, feeMoment }, payment(status));
        for (const posting of postings) expect(unbalanced(posting.entries), posting.cause).toBeUndefined();
        const held = sum(
          postings.flatMap((posting) =>
            posting.entries.filter((entry) => entry.account === 'deal_held:d1').map((entry) => entry.amount),
          ),
        );
        expect(held).toBe(
          status === 'released' || status === 'refunded'
            ? 0n
            : feeMoment === 'payment'
              ? toMinor('975')
              : toMinor('1000'),
        );
      }
    }
  });

  it('tells an unbalanced set of entries', () => {
    const entry = (account: string, amount: bigint, currency = 'RUB') => ({ account, amount, currency });
    expect(unbalanced([entry('a', -5n), entry('b', 5n)])).toBeUndefined();
    expect(unbalanced([entry('a', -5n), entry('b', 4n)])).toMatch(/RUB/);
    expect(unbalanced([entry('a', -5n), entry('b', 5n, 'EUR')])).toMatch(/RUB, EUR/);
    expect(unbalanced([entry('a', 0n), entry('b', 0n)])).toMatch(/0/);
    expect(unbalanced([entry('a', 5n)])).toMatch(/two entries/);
  });
});
