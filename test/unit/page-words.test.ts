// What a buyer or a seller reads on a page when a move is refused: the refusal in words, never "the form could not be
// read" for a refusal that has its own (a dispute that opened while the buyer's release was on its way).
import { describe, expect, it } from 'vitest';
import { problemWords } from '../../src/web/page.ts';
import { canonicalTimeZone, formatDate, TIME_ZONES, translator } from '../../src/web/i18n.ts';
import { problemStatus } from '../../src/http/problem-catalog.ts';

describe('problemWords', () => {
  it('says that a dispute is open, in English and Russian, apart from the dispute state of the same name', () => {
    expect(problemWords(translator('en'), { code: 'dispute_open', status: 400 })).toContain(
      'only the arbiter’s decision moves the money',
    );
    expect(problemWords(translator('ru'), { code: 'dispute_open', status: 400 })).toContain('открыт спор');
    expect(translator('en')('dispute_open')).toBe('Open: waiting for the arbiter');
  });

  it('explains the refusals a page meets, and falls back to the form or our side for the rest', () => {
    const t = translator('en');
    expect(problemWords(t, { code: 'deal_closed', status: 400 })).toBe(
      'This deal is closed and cannot change any more.',
    );
    expect(problemWords(t, { code: 'validation_failed', status: 400 })).toBe(t('badForm'));
    expect(problemWords(t, { code: 'internal_error', status: 500 })).toBe(t('internalError'));
  });

  it('explains what a buyer’s Pay may meet at the acquirer, in both languages', () => {
    for (const lang of ['en', 'ru'] as const) {
      const t = translator(lang);
      for (const code of [
        'currency_not_supported',
        'acquirer_not_configured',
        'acquirer_refused',
        'acquirer_unavailable',
      ] as const) {
        expect(problemWords(t, { code, status: problemStatus(code) }), `${lang} ${code}`).toBe(t(code));
      }
    }
  });
});

describe('formatDate', () => {
  it('shows a moment in Moscow time, naming the zone, in one format per language', () => {
    // 21:30 UTC is 00:30 the next day in Moscow (UTC+3, no daylight saving since 2014).
    const iso = '2026-11-25T21:30:00.000Z';
    expect(formatDate('en', iso).replace(/\u202f/g, ' ')).toBe('26 Nov 2026, 00:30 Moscow time');
    expect(formatDate('ru', iso).replace(/\u202f/g, ' ')).toBe('26 нояб. 2026 г., 00:30 мск');
  });
});

describe('time zones', () => {
  it('shows a moment in the zone a person chose, naming it', () => {
    const iso = '2026-11-25T21:30:00.000Z';
    expect(formatDate('en', iso, 'Europe/Berlin').replace(/\u202f/g, ' ')).toBe('25 Nov 2026, 22:30 Europe/Berlin');
    expect(formatDate('ru', iso, 'Asia/Vladivostok').replace(/\u202f/g, ' ')).toBe(
      '26 нояб. 2026 г., 07:30 Asia/Vladivostok',
    );
    expect(formatDate('en', iso, null).replace(/\u202f/g, ' ')).toBe('26 Nov 2026, 00:30 Moscow time');
  });

  it.each([
    ['Europe/Berlin', 'Europe/Berlin'],
    ['europe/berlin', 'Europe/Berlin'],
    // ICU's canonical name, which is what is stored and what the profile's list offers.
    ['America/Argentina/Buenos_Aires', 'America/Buenos_Aires'],
    ['UTC', 'UTC'],
    ['Mars/Olympus_Mons', undefined],
    ['+03:00', undefined],
    ['', undefined],
    ['Europe/Berlin\n', undefined],
  ])('takes %j as %j', (given, canonical) => {
    expect(canonicalTimeZone(given)).toBe(canonical);
  });

  it('offers only zones that are stored as they are offered', () => {
    expect(TIME_ZONES.length).toBeGreaterThan(300);
    expect(TIME_ZONES).toContain('Europe/Moscow');
    expect(TIME_ZONES.filter((zone) => canonicalTimeZone(zone) !== zone)).toEqual([]);
  });
});
