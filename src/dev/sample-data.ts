// A deterministic generator of plausible sample tenders: each country's tenders in its language (Russian in Russia,
// Kazakhstan, Belarus and Kyrgyzstan; English in the United Kingdom, Ireland and Malta) under its procurement law,
// buyers buying what such buyers buy (sample-data-catalog.ts), values in each category's usual range, OKPD2 codes in
// the Russian-speaking countries (their classifiers share its structure) and CPV codes in Europe. Tender i is a pure
// function of (i, reference day, seed): `npm start` takes a few thousand, the benchmark a million. Publication dates
// lie in the 700 days before the reference day (the day the loader runs), never after it; open tenders have deadlines
// ahead. Everything it makes is marked as sample data, and its raw record says what it was made from.
import type { TenderRecord } from '../data-api/ingest.ts';
import {
  BUYS,
  COUNTRIES,
  PRODUCTS,
  type BuyerKind,
  type Country,
  type Kind,
  type ProductKey,
} from './sample-data-catalog.ts';

export const SAMPLE_SEED = 44;
const DAY = 86_400_000;

/** Midnight (UTC) of the day `now` falls on: the reference day of data loaded now. */
export function referenceDay(now = Date.now()): number {
  return Math.floor(now / DAY) * DAY;
}

/** mulberry32: a small, fast, seedable PRNG. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOTAL_WEIGHT = COUNTRIES.reduce((sum, c) => sum + c.weight, 0);
const RU_VERB: Record<Kind, string> = {
  goods: 'Поставка',
  services: 'Оказание услуг по',
  works: 'Выполнение работ по',
};
const EN_VERB: Record<Kind, string> = { goods: 'Supply of', services: 'Provision of', works: '' };
const METHODS = ['open', 'open', 'open', 'selective', 'limited'];

/** A valid 10-digit Russian legal-entity INN (the last digit is its checksum). */
function inn(rand: () => number): string {
  const digits = Array.from({ length: 9 }, () => Math.floor(rand() * 10));
  if (digits[0] === 0) digits[0] = 7;
  const weights = [2, 4, 10, 3, 5, 9, 4, 6, 8];
  const check = (weights.reduce((sum, w, i) => sum + w * digits[i], 0) % 11) % 10;
  return [...digits, check].join('');
}

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)];
}

function pickCountry(rand: () => number): Country {
  let roll = rand() * TOTAL_WEIGHT;
  for (const country of COUNTRIES) {
    roll -= country.weight;
    if (roll < 0) return country;
  }
  return COUNTRIES[0];
}

const money = (amount: number, lang: 'ru' | 'en') =>
  amount.toLocaleString(lang === 'ru' ? 'ru-RU' : 'en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** What a sample tender was made from: the truth the relevance benchmark judges by. */
export interface SampleTruth {
  product: ProductKey;
  buyer_kind: BuyerKind;
  city: string;
}

/** Tender number `index` of the sample set made with `seed`, dated relative to the `reference` day. */
export function sampleTender(index: number, reference: number, seed = SAMPLE_SEED): TenderRecord {
  const rand = random(seed * 1_000_003 + index);
  const country = pickCountry(rand);
  const buyerKind = pick(rand, Object.keys(country.buyers) as BuyerKind[]);
  const productKey = pick(rand, BUYS[buyerKind]);
  const product = PRODUCTS[productKey];
  const city = pick(rand, country.cities);
  const number = 1 + Math.floor(rand() * 180);
  const ru = country.lang === 'ru';
  const buyerName = country.buyers[buyerKind]!(city, number);
  const [low, high] = product.value;
  // Values lean to the low end of the range, as most purchases are small.
  const amount = Math.round((low + rand() ** 2 * (high - low)) * 1000 * country.rate * 100) / 100;
  const published = reference - 1 - Math.floor(rand() * 700 * DAY);
  const deadline = published + (7 + Math.floor(rand() * 24)) * DAY;
  const closed = deadline < reference - 20 * DAY;
  const roll = rand();
  const status = roll < 0.03 ? 'cancelled' : !closed ? 'active' : roll < 0.09 ? 'unsuccessful' : 'complete';
  const law = country.law(buyerKind, new Date(published));
  const months = 1 + Math.floor(rand() * 12);
  const sourceId = `${country.code}-${String(index).padStart(7, '0')}`;
  const object = pick(rand, ru ? product.ru : product.en);
  const title = ru
    ? `${RU_VERB[product.kind]} ${object}`
    : `${EN_VERB[product.kind]} ${object}`.trim().replace(/^./, (c) => c.toUpperCase());
  const code = ru ? product.okpd2 : product.cpv;
  const description = ru
    ? `Объект закупки: ${title.replace(/^./, (c) => c.toLowerCase())} в соответствии с описанием объекта закупки. ` +
      `Заказчик: ${buyerName}. Место исполнения: г. ${city}. Срок исполнения контракта: ${months} мес. с даты заключения. ` +
      `Начальная (максимальная) цена контракта: ${money(amount, 'ru')} ${country.currency}. ${country.lawText(law)}. ` +
      `Код ОКПД2 ${code[0]} (${code[1]}).`
    : `${title} for ${buyerName}, ${city}, as set out in the specification. Contract duration: ${months} months. ` +
      `Estimated value: ${money(amount, 'en')} ${country.currency} excluding VAT. ${country.lawText(law)} ` +
      `Tenders must be submitted electronically before the deadline; the award criterion is the most advantageous tender. ` +
      `CPV ${code[0]} (${code[1]}).`;
  const truth: SampleTruth = { product: productKey, buyer_kind: buyerKind, city };
  return {
    sourceId,
    ocid: `ocds-sample-${sourceId}`,
    country: country.code,
    title,
    description,
    buyerName,
    buyerId: ru
      ? country.code === 'RU'
        ? inn(rand)
        : String(100_000_000_000 + Math.floor(rand() * 899_999_999_999))
      : `${country.code}-ORG-${number}${Math.floor(rand() * 1000)}`,
    valueAmount: amount,
    valueCurrency: country.currency,
    status,
    law,
    procurementMethod: pick(rand, METHODS),
    publishedAt: new Date(published).toISOString(),
    deadlineAt: new Date(deadline).toISOString(),
    url: `https://sample.invalid/tenders/${sourceId}`,
    classification: [{ scheme: ru ? 'OKPD2' : 'CPV', id: code[0], description: code[1] }],
    raw: {
      sample: true,
      generator: 'svc sample data v3',
      seed,
      index,
      reference_day: new Date(reference).toISOString().slice(0, 10),
      ...truth,
    },
    sample: true,
  };
}

export const SAMPLE_COUNTRIES = COUNTRIES.map((c) => c.code);
