// The judged set of bench:relevance: queries as suppliers and agents ask them (Russian, English, mixed, with filters,
// with a one-letter typo), each judged by meaning. A judgment looks at what a sample tender truly is (the product,
// the buyer and the city the generator made it from, its country, status, law, value and dates) and never at its
// words, so it cannot copy the engine: 2 is what the query asks for, 1 is related (the right goods in another city,
// a neighbouring category), 0 the rest.
import type { ProductKey } from '../src/dev/sample-data-catalog.ts';

export interface JudgedTender {
  product: ProductKey;
  buyer_kind: string;
  city: string;
  country: string;
  status: string;
  law: string | null;
  value: number;
  currency: string;
  deadline: string;
  published: string;
}

export interface Judgment {
  /** The request as GET /v1/tenders takes it. */
  query: Record<string, string>;
  tags: Array<'ru' | 'en' | 'mixed' | 'filters' | 'typo'>;
  grade: (t: JudgedTender) => 0 | 1 | 2;
}

const DAY = 86_400_000;
const date = (daysFromToday: number) => new Date(Date.now() + daysFromToday * DAY).toISOString().slice(0, 10);

/** Grade 2 for these products, 1 for the related ones. */
const about =
  (products: ProductKey[], related: ProductKey[] = []) =>
  (t: JudgedTender) =>
    products.includes(t.product) ? 2 : related.includes(t.product) ? 1 : 0;
/** Grade 2 when `also` holds too, 1 when only the product fits. */
const aboutWhere = (products: ProductKey[], also: (t: JudgedTender) => boolean) => (t: JudgedTender) =>
  products.includes(t.product) ? (also(t) ? 2 : 1) : 0;
/** Filters narrow what counts at all: outside them nothing is relevant. */
const within = (filter: (t: JudgedTender) => boolean, grade: Judgment['grade']) => (t: JudgedTender) =>
  filter(t) ? grade(t) : 0;

const ru = (q: string, grade: Judgment['grade']): Judgment => ({ query: { q }, tags: ['ru'], grade });
const en = (q: string, grade: Judgment['grade']): Judgment => ({ query: { q }, tags: ['en'], grade });
const typo = (q: string, grade: Judgment['grade']): Judgment => ({ query: { q }, tags: ['typo'], grade });

export const JUDGMENTS: Judgment[] = [
  // The queries of issue 15.
  ru('лекарственные средства', about(['medicines'])),
  ru('лекарства', about(['medicines'])),
  en('medicines', about(['medicines'])),
  en('medicine', about(['medicines'])),
  en('drugs', about(['medicines'])),
  ru('поставка лекарственных препаратов', about(['medicines'])),
  // Russian.
  ru('медикаменты', about(['medicines'])),
  ru('дизельное топливо', about(['diesel'], ['petrol'])),
  ru('топливо', about(['diesel', 'petrol'])),
  ru('бензин', about(['petrol'], ['diesel'])),
  ru('продукты питания', about(['food'], ['catering'])),
  ru('организация питания', about(['catering'], ['food'])),
  ru('строительство школы', about(['school_construction'])),
  ru('капитальный ремонт здания', about(['refurbishment'], ['design'])),
  ru('ремонт дорог', about(['road_repair'])),
  ru('программное обеспечение', about(['software'], ['it_support'])),
  ru('ноутбуки', about(['computers'])),
  ru('компьютерная техника', about(['computers'])),
  ru('канцтовары', about(['office_supplies'])),
  ru('мебель', about(['furniture'])),
  ru('спецодежда', about(['workwear'])),
  ru('стройматериалы', about(['building_materials'])),
  ru('учебники', about(['textbooks'])),
  ru('уборка помещений', about(['cleaning'])),
  ru('охрана', about(['security'])),
  ru('электроэнергия', about(['electricity'])),
  ru('ОСАГО', about(['motor_insurance'])),
  ru('школьные перевозки', about(['school_transport'])),
  ru('повышение квалификации', about(['training'])),
  ru('проектная документация', about(['design'])),
  ru('водопроводные сети', about(['water_mains'])),
  ru('вентиляция', about(['ventilation'])),
  ru('благоустройство', about(['landscaping'])),
  ru('смартфоны', about(['mobile_phones'])),
  ru('медицинское оборудование', about(['medical_equipment'], ['medical_consumables'])),
  ru('медицинские расходные материалы', about(['medical_consumables'], ['medical_equipment'])),
  ru('легковые автомобили', about(['vehicles'], ['vehicle_maintenance'])),
  ru('техническое обслуживание автомобилей', about(['vehicle_maintenance'])),
  // English.
  en('pharmaceuticals', about(['medicines'])),
  en('diesel fuel', about(['diesel'], ['petrol'])),
  en('fuel', about(['diesel', 'petrol'])),
  en('food supplies', about(['food'], ['catering'])),
  en('catering services', about(['catering'], ['food'])),
  en('school construction', about(['school_construction'])),
  en('road repair', about(['road_repair'])),
  en('laptops', about(['computers'])),
  en('stationery', about(['office_supplies'])),
  en('furniture', about(['furniture'])),
  en('workwear', about(['workwear'])),
  en('cleaning services', about(['cleaning'])),
  en('security guards', about(['security'])),
  en('electricity supply', about(['electricity'])),
  en('software licences', about(['software'], ['it_support'])),
  en('medical equipment', about(['medical_equipment'], ['medical_consumables'])),
  en('landscaping', about(['landscaping'])),
  en('water mains', about(['water_mains'])),
  en('HVAC', about(['ventilation'])),
  en('textbooks', about(['textbooks'])),
  en('car insurance', about(['motor_insurance'])),
  // Mixed: a Russian word and an English one, or goods and a place in the other language.
  { query: { q: 'medicines Москва' }, tags: ['mixed'], grade: aboutWhere(['medicines'], (t) => t.city === 'Москва') },
  { query: { q: 'лекарства London' }, tags: ['mixed'], grade: aboutWhere(['medicines'], (t) => t.city === 'London') },
  { query: { q: 'diesel Пермь' }, tags: ['mixed'], grade: aboutWhere(['diesel'], (t) => t.city === 'Пермь') },
  { query: { q: 'ноутбуки laptops' }, tags: ['mixed'], grade: about(['computers']) },
  { query: { q: 'уборка cleaning' }, tags: ['mixed'], grade: about(['cleaning']) },
  { query: { q: 'дизельное топливо Казань' }, tags: ['ru'], grade: aboutWhere(['diesel'], (t) => t.city === 'Казань') },
  { query: { q: 'road repair Leeds' }, tags: ['en'], grade: aboutWhere(['road_repair'], (t) => t.city === 'Leeds') },
  // With filters.
  {
    query: { q: 'лекарственные препараты', status: 'active' },
    tags: ['filters'],
    grade: within((t) => t.status === 'active', about(['medicines'])),
  },
  {
    query: { q: 'medicines', country: 'IE' },
    tags: ['filters'],
    grade: within((t) => t.country === 'IE', about(['medicines'])),
  },
  {
    query: { q: 'ремонт дорог', value_min: '100000000', currency: 'RUB' },
    tags: ['filters'],
    grade: within((t) => t.currency === 'RUB' && t.value >= 1e8, about(['road_repair'])),
  },
  {
    query: { q: 'catering', law: 'eu-2014-24' },
    tags: ['filters'],
    grade: within((t) => t.law === 'eu-2014-24', about(['catering'], ['food'])),
  },
  {
    query: { q: 'продукты питания', buyer: 'школа' },
    tags: ['filters'],
    grade: within(
      (t) => t.buyer_kind === 'school' && ['RU', 'KZ', 'BY', 'KG'].includes(t.country),
      about(['food'], ['catering']),
    ),
  },
  {
    query: { classification: 'cpv:336' },
    tags: ['filters'],
    grade: within((t) => ['GB', 'IE', 'MT'].includes(t.country), about(['medicines'])),
  },
  {
    query: { q: 'security services', status: 'active', sort: 'deadline' },
    tags: ['filters'],
    grade: within((t) => t.status === 'active', about(['security'])),
  },
  {
    query: { q: 'уборка', deadline_from: date(0) },
    tags: ['filters'],
    grade: within((t) => t.deadline >= date(0), about(['cleaning'])),
  },
  {
    query: { q: 'furniture', published_from: date(-120) },
    tags: ['filters'],
    grade: within((t) => t.published >= date(-120), about(['furniture'])),
  },
  {
    query: { q: 'дизельное топливо', law: '223-fz' },
    tags: ['filters'],
    grade: within((t) => t.law === '223-fz', about(['diesel'])),
  },
  {
    query: { q: 'computers', country: 'GB', value_max: '50000' },
    tags: ['filters'],
    grade: within((t) => t.country === 'GB' && t.value <= 50000, about(['computers'])),
  },
  // One-letter typos.
  typo('лекарственых препаратов', about(['medicines'])),
  typo('медикоменты', about(['medicines'])),
  typo('medicnes', about(['medicines'])),
  typo('ventilaton', about(['ventilation'])),
  typo('ноутбки', about(['computers'])),
  typo('дизельнго топлива', about(['diesel'], ['petrol'])),
  typo('textboks', about(['textbooks'])),
  typo('landscapng', about(['landscaping'])),
  typo('спецодежа', about(['workwear'])),
  typo('electricty', about(['electricity'])),
];
