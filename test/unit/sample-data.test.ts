// The sample data generator's promises: the same input gives the same tender, the set spans countries (Russia among
// them), languages and both classification schemes, dates are current for the day it is loaded, and everything is
// marked as sample data; the practice decisions and corpora are there in number.
import { describe, expect, it } from 'vitest';
import { referenceDay, sampleTender } from '../../src/dev/sample-data.ts';
import { SAMPLE_CORPORA, samplePracticeDecisions } from '../../src/dev/sample-data-texts.ts';
import { BUYS, type BuyerKind } from '../../src/dev/sample-data-catalog.ts';

const DAY = 86_400_000;
const today = referenceDay(Date.parse('2026-11-21T15:30:00Z'));
const tenders = Array.from({ length: 2000 }, (_, i) => sampleTender(i, today));

describe('sample tenders', () => {
  it('are a pure function of index, reference day and seed', () => {
    expect(today).toBe(Date.parse('2026-11-21T00:00:00Z'));
    expect(sampleTender(7, today)).toEqual(tenders[7]);
    expect(sampleTender(7, today)).not.toEqual(tenders[8]);
    expect(sampleTender(7, today, 45)).not.toEqual(tenders[7]);
    const later = sampleTender(7, today + 10 * DAY);
    expect({ ...later, publishedAt: null, deadlineAt: null, status: null, raw: null }).toEqual({
      ...tenders[7],
      publishedAt: null,
      deadlineAt: null,
      status: null,
      raw: null,
    });
    expect(Date.parse(later.publishedAt!) - Date.parse(tenders[7].publishedAt!)).toBe(10 * DAY);
  });

  it('span at least six countries with Russia, both languages, CPV and OKPD2, buyers and values', () => {
    const countries = new Set(tenders.map((t) => t.country));
    expect(countries.size).toBeGreaterThanOrEqual(6);
    expect(countries).toContain('RU');
    expect(tenders.some((t) => /[а-я]/i.test(t.title))).toBe(true);
    expect(tenders.some((t) => /^[\x20-\x7e]+$/.test(t.title))).toBe(true);
    const schemes = new Set(tenders.flatMap((t) => t.classification!.map((c) => c.scheme)));
    expect([...schemes].sort()).toEqual(['CPV', 'OKPD2']);
    for (const t of tenders.filter((t) => t.country === 'RU'))
      expect(t.classification![0]).toMatchObject({ scheme: 'OKPD2', id: expect.stringMatching(/^\d{2}\.\d{2}/) });
    for (const t of tenders) {
      expect(t.buyerName).not.toBe('');
      expect(t.valueAmount).toBeGreaterThan(0);
      expect(t.sample).toBe(true);
      expect(t.raw).toMatchObject({ sample: true, reference_day: '2026-11-21' });
    }
  });

  it('are dated within 700 days before the reference day, never after it; open ones have recent or future deadlines', () => {
    for (const t of tenders) {
      const published = Date.parse(t.publishedAt!);
      expect(published).toBeLessThan(today);
      expect(published).toBeGreaterThan(today - 701 * DAY);
      expect(Date.parse(t.deadlineAt!)).toBeGreaterThan(published);
      if (t.status === 'active') expect(Date.parse(t.deadlineAt!)).toBeGreaterThanOrEqual(today - 30 * DAY);
    }
    const statuses = new Set(tenders.map((t) => t.status));
    expect([...statuses].sort()).toEqual(['active', 'cancelled', 'complete', 'unsuccessful']);
    expect(tenders.filter((t) => Date.parse(t.deadlineAt!) > today).length).toBeGreaterThan(10);
  });

  it('speak their country’s language under its law, buyers buying what such buyers buy', () => {
    const russianSpeaking = ['RU', 'KZ', 'BY', 'KG'];
    const laws: Record<string, string[]> = {
      RU: ['44-fz', '223-fz'],
      KZ: ['kz-106-viii'],
      BY: ['by-419-z'],
      KG: ['kg-27'],
      GB: ['uk-pa-2023', 'uk-pcr-2015'],
      IE: ['eu-2014-24'],
      MT: ['eu-2014-24'],
    };
    for (const t of tenders) {
      const russian = russianSpeaking.includes(t.country);
      expect(/[а-яё]/i.test(t.title), t.title).toBe(russian);
      expect(laws[t.country], t.country).toContain(t.law);
      expect(t.classification![0].scheme).toBe(russian ? 'OKPD2' : 'CPV');
      const { product, buyer_kind: kind } = t.raw as { product: string; buyer_kind: string };
      expect(BUYS[kind as BuyerKind], `${kind} buys ${product}`).toContain(product);
    }
    // Schools never buy medicines; hospitals never buy textbooks.
    expect(
      tenders.some(
        (t) => (t.raw as { buyer_kind: string }).buyer_kind === 'school' && /лекарств|pharmaceut/i.test(t.title),
      ),
    ).toBe(false);
    // Values in each category's range: a school is not built for a few thousand.
    for (const t of tenders.filter((t) => (t.raw as { product: string }).product === 'school_construction')) {
      const rate = t.valueCurrency === 'RUB' ? 95 : t.valueCurrency === 'EUR' ? 1 : undefined;
      if (rate) expect(t.valueAmount! / rate).toBeGreaterThanOrEqual(3_000_000);
    }
  });
});

describe('sample practice and knowledge', () => {
  it('has at least 200 practice decisions and two corpora with documents', () => {
    const decisions = samplePracticeDecisions();
    expect(decisions.length).toBeGreaterThanOrEqual(200);
    expect(new Set(decisions.map((d) => d.id)).size).toBe(decisions.length);
    expect(SAMPLE_CORPORA.length).toBeGreaterThanOrEqual(2);
    for (const corpus of SAMPLE_CORPORA) expect(corpus.documents.length).toBeGreaterThan(0);
  });
});
