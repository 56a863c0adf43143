// Amounts, sizes and moments as pages and mails write them (src/web/i18n.ts). Each formatter is built once and kept:
// these tests alternate languages, currencies and zones, so a formatter kept under too coarse a key shows up as a
// wrong currency or zone.
import { describe, expect, it } from 'vitest';
import { formatDate, formatMoney, formatSize } from '../../src/web/i18n.ts';

/** Intl writes Russian numbers with no-break spaces; the tests compare with plain ones. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

describe('formatMoney', () => {
  it('writes each language’s and currency’s form, however they alternate', () => {
    for (let round = 0; round < 2; round++) {
      expect(plain(formatMoney('ru', 1500.5, 'RUB'))).toBe('1 500,50 ₽');
      expect(plain(formatMoney('en', 1500.5, 'RUB'))).toBe('RUB 1,500.50');
      expect(plain(formatMoney('ru', 1500.5, 'USD'))).toBe('1 500,50 $');
      expect(plain(formatMoney('en', 1500.5, 'USD'))).toBe('US$1,500.50');
      expect(plain(formatMoney('en', 0.07, 'EUR'))).toBe('€0.07');
    }
  });

  it('writes the amount and the code when Intl does not know the currency, every time', () => {
    expect(formatMoney('en', 12.5, 'R$')).toBe('12.5 R$');
    expect(formatMoney('en', 12.5, 'R$')).toBe('12.5 R$');
    expect(plain(formatMoney('en', 12.5, 'RUB'))).toBe('RUB 12.50');
  });
});

describe('formatDate and formatSize', () => {
  it('names each zone’s own time, however zones and languages alternate', () => {
    const iso = '2026-11-25T21:30:00.000Z';
    for (let round = 0; round < 2; round++) {
      expect(plain(formatDate('en', iso))).toBe('26 Nov 2026, 00:30 Moscow time');
      expect(plain(formatDate('en', iso, 'Europe/Berlin'))).toBe('25 Nov 2026, 22:30 Europe/Berlin');
      expect(plain(formatDate('ru', iso, 'Europe/Berlin'))).toBe('25 нояб. 2026 г., 22:30 Europe/Berlin');
      expect(plain(formatDate('ru', iso))).toBe('26 нояб. 2026 г., 00:30 мск');
    }
    expect(() => formatDate('en', iso, 'Not/AZone')).toThrow(RangeError);
  });

  it('writes sizes with one decimal in each language', () => {
    expect(formatSize('en', 1536)).toBe('1.5 KB');
    expect(formatSize('ru', 1536)).toBe('1,5 КБ');
    expect(formatSize('en', 512)).toBe('512 B');
  });
});
