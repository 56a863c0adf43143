// A deterministic generator of realistic sample tenders (Russian and English, ten countries, CPV and OKPD2 codes,
// buyers, values, deadlines). Tender i is a pure function of (i, reference day, seed): `npm start` takes a few
// thousand, the benchmark a million. Dates lie in the 700 days before the reference day, which the loader sets to
// the day it loads, so a newcomer sees current tenders. Everything it makes is marked as sample data.
import type { TenderRecord } from '../data-api/ingest.ts';

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

type Kind = 'goods' | 'services' | 'works';
interface Product {
  kind: Kind;
  cpv: [string, string];
  okpd2: [string, string];
  ru: string; // the object in the case its Russian verb needs
  en: string;
  value: [number, number]; // in EUR-equivalent thousands
}

const PRODUCTS: Product[] = [
  { kind: 'goods', cpv: ['33140000-3', 'Medical consumables'], okpd2: ['32.50.13.190', 'Инструменты и приспособления, применяемые в медицинских целях, прочие'], ru: 'медицинских изделий и расходных материалов', en: 'medical consumables', value: [20, 800] },
  { kind: 'goods', cpv: ['33600000-6', 'Pharmaceutical products'], okpd2: ['21.20.10.190', 'Препараты лекарственные прочие'], ru: 'лекарственных препаратов', en: 'pharmaceutical products', value: [50, 3000] },
  { kind: 'goods', cpv: ['30213000-5', 'Personal computers'], okpd2: ['26.20.11.110', 'Компьютеры портативные массой не более 10 кг'], ru: 'ноутбуков и персональных компьютеров', en: 'laptops and personal computers', value: [15, 600] },
  { kind: 'goods', cpv: ['30192000-1', 'Office supplies'], okpd2: ['17.23.13.199', 'Принадлежности канцелярские прочие'], ru: 'канцелярских товаров', en: 'office supplies', value: [2, 60] },
  { kind: 'goods', cpv: ['09134100-8', 'Diesel oil'], okpd2: ['19.20.21.315', 'Топливо дизельное летнее экологического класса К5'], ru: 'дизельного топлива', en: 'diesel fuel', value: [40, 2000] },
  { kind: 'goods', cpv: ['15800000-6', 'Miscellaneous food products'], okpd2: ['10.89.19.290', 'Продукты пищевые прочие'], ru: 'продуктов питания', en: 'food products', value: [10, 900] },
  { kind: 'goods', cpv: ['34144900-7', 'Electric vehicles'], okpd2: ['29.10.24.000', 'Средства автотранспортные для перевозки людей прочие'], ru: 'легковых автомобилей', en: 'passenger cars', value: [30, 1500] },
  { kind: 'goods', cpv: ['39130000-2', 'Office furniture'], okpd2: ['31.01.11.150', 'Мебель металлическая для офисов'], ru: 'офисной мебели', en: 'office furniture', value: [5, 300] },
  { kind: 'goods', cpv: ['22110000-4', 'Printed books'], okpd2: ['58.11.10.000', 'Книги печатные'], ru: 'учебной литературы', en: 'school textbooks', value: [5, 400] },
  { kind: 'goods', cpv: ['18100000-0', 'Occupational clothing'], okpd2: ['14.12.30.131', 'Одежда специальная для защиты от общих производственных загрязнений'], ru: 'специальной одежды', en: 'protective workwear', value: [3, 200] },
  { kind: 'goods', cpv: ['44111000-1', 'Building materials'], okpd2: ['23.51.12.110', 'Портландцемент'], ru: 'строительных материалов', en: 'building materials', value: [10, 700] },
  { kind: 'goods', cpv: ['33190000-8', 'Miscellaneous medical devices'], okpd2: ['26.60.12.119', 'Аппараты медицинские прочие'], ru: 'медицинского оборудования', en: 'medical equipment', value: [60, 5000] },
  { kind: 'goods', cpv: ['48000000-8', 'Software package and information systems'], okpd2: ['58.29.29.000', 'Обеспечение программное прикладное прочее на электронном носителе'], ru: 'лицензий на программное обеспечение', en: 'software licences', value: [10, 1200] },
  { kind: 'goods', cpv: ['32250000-0', 'Mobile telephones'], okpd2: ['26.30.22.000', 'Аппараты телефонные для сотовых сетей связи'], ru: 'средств связи', en: 'mobile communication devices', value: [5, 250] },
  { kind: 'goods', cpv: ['09310000-5', 'Electricity'], okpd2: ['35.11.10.110', 'Электроэнергия, произведенная тепловыми электростанциями'], ru: 'электрической энергии', en: 'electricity supply', value: [100, 6000] },
  { kind: 'services', cpv: ['90910000-9', 'Cleaning services'], okpd2: ['81.21.10.000', 'Услуги по общей уборке зданий'], ru: 'уборке помещений', en: 'cleaning services', value: [10, 600] },
  { kind: 'services', cpv: ['79710000-4', 'Security services'], okpd2: ['80.10.12.000', 'Услуги охраны'], ru: 'охране объектов', en: 'security services', value: [20, 900] },
  { kind: 'services', cpv: ['55520000-1', 'Catering services'], okpd2: ['56.29.20.000', 'Услуги по обеспечению питанием'], ru: 'организации питания', en: 'catering services', value: [30, 1500] },
  { kind: 'services', cpv: ['72260000-5', 'Software-related services'], okpd2: ['62.01.29.000', 'Оригиналы программного обеспечения прочие'], ru: 'сопровождению информационной системы', en: 'information system maintenance', value: [20, 1500] },
  { kind: 'services', cpv: ['50112000-3', 'Repair and maintenance services of cars'], okpd2: ['45.20.11.000', 'Услуги по техническому обслуживанию и ремонту легковых автомобилей'], ru: 'техническому обслуживанию автомобилей', en: 'vehicle maintenance', value: [5, 200] },
  { kind: 'services', cpv: ['66510000-8', 'Insurance services'], okpd2: ['65.12.21.000', 'Услуги по обязательному страхованию гражданской ответственности владельцев транспортных средств'], ru: 'страхованию гражданской ответственности', en: 'insurance services', value: [2, 150] },
  { kind: 'services', cpv: ['60130000-8', 'Special-purpose road passenger-transport services'], okpd2: ['49.39.39.000', 'Услуги по перевозке пассажиров сухопутным транспортом прочие'], ru: 'перевозке пассажиров', en: 'passenger transport services', value: [20, 1200] },
  { kind: 'services', cpv: ['80530000-8', 'Vocational training services'], okpd2: ['85.42.19.000', 'Услуги по дополнительному профессиональному образованию прочие'], ru: 'обучению специалистов', en: 'staff training', value: [3, 120] },
  { kind: 'services', cpv: ['71240000-2', 'Architectural, engineering and planning services'], okpd2: ['71.12.12.000', 'Услуги по инженерно-техническому проектированию зданий'], ru: 'разработке проектной документации', en: 'design and engineering services', value: [30, 2500] },
  { kind: 'works', cpv: ['45233140-2', 'Roadworks'], okpd2: ['42.11.20.000', 'Работы строительные по строительству автомагистралей, автомобильных дорог'], ru: 'ремонту автомобильных дорог', en: 'road repair works', value: [200, 20000] },
  { kind: 'works', cpv: ['45453000-7', 'Overhaul and refurbishment work'], okpd2: ['43.39.19.190', 'Работы завершающие и отделочные в зданиях и сооружениях, прочие'], ru: 'капитальному ремонту здания', en: 'building refurbishment works', value: [100, 9000] },
  { kind: 'works', cpv: ['45214200-2', 'Construction work for school buildings'], okpd2: ['41.20.40.000', 'Работы строительные по возведению нежилых зданий и сооружений'], ru: 'строительству здания школы', en: 'construction of a school building', value: [2000, 60000] },
  { kind: 'works', cpv: ['45232150-8', 'Works related to water-distribution pipelines'], okpd2: ['42.21.22.000', 'Работы строительные по строительству магистральных трубопроводов для жидкостей'], ru: 'реконструкции водопроводных сетей', en: 'water main reconstruction works', value: [150, 12000] },
  { kind: 'works', cpv: ['45331000-6', 'Heating, ventilation and air-conditioning installation work'], okpd2: ['43.22.12.140', 'Работы по монтажу систем вентиляции и кондиционирования воздуха'], ru: 'монтажу систем вентиляции', en: 'ventilation installation works', value: [40, 2500] },
  { kind: 'works', cpv: ['45112700-2', 'Landscaping work'], okpd2: ['81.30.10.000', 'Услуги по планировке ландшафта'], ru: 'благоустройству территории', en: 'landscaping works', value: [20, 3000] },
];

interface Country {
  code: string;
  lang: 'ru' | 'en';
  currency: string;
  rate: number; // currency units per EUR, rounded
  weight: number;
  cities: string[];
}

const COUNTRIES: Country[] = [
  { code: 'RU', lang: 'ru', currency: 'RUB', rate: 95, weight: 40, cities: ['Москва', 'Санкт-Петербург', 'Казань', 'Новосибирск', 'Екатеринбург', 'Нижний Новгород', 'Самара', 'Краснодар', 'Пермь', 'Томск'] },
  { code: 'KZ', lang: 'ru', currency: 'KZT', rate: 520, weight: 8, cities: ['Астана', 'Алматы', 'Караганда', 'Шымкент'] },
  { code: 'BY', lang: 'ru', currency: 'BYN', rate: 3.5, weight: 6, cities: ['Минск', 'Гомель', 'Брест', 'Витебск'] },
  { code: 'GB', lang: 'en', currency: 'GBP', rate: 0.86, weight: 9, cities: ['London', 'Manchester', 'Leeds', 'Bristol', 'Glasgow'] },
  { code: 'DE', lang: 'en', currency: 'EUR', rate: 1, weight: 10, cities: ['Berlin', 'Hamburg', 'Munich', 'Cologne', 'Leipzig'] },
  { code: 'FR', lang: 'en', currency: 'EUR', rate: 1, weight: 8, cities: ['Paris', 'Lyon', 'Marseille', 'Toulouse', 'Lille'] },
  { code: 'PL', lang: 'en', currency: 'PLN', rate: 4.3, weight: 6, cities: ['Warsaw', 'Kraków', 'Gdańsk', 'Wrocław'] },
  { code: 'ES', lang: 'en', currency: 'EUR', rate: 1, weight: 5, cities: ['Madrid', 'Barcelona', 'Valencia', 'Seville'] },
  { code: 'IT', lang: 'en', currency: 'EUR', rate: 1, weight: 5, cities: ['Rome', 'Milan', 'Turin', 'Naples'] },
  { code: 'US', lang: 'en', currency: 'USD', rate: 1.08, weight: 3, cities: ['Austin', 'Denver', 'Seattle', 'Boston'] },
];
const TOTAL_WEIGHT = COUNTRIES.reduce((sum, c) => sum + c.weight, 0);

const RU_BUYERS = [
  (city: string, n: number) => `ГБУЗ «Городская клиническая больница № ${n}» (${city})`,
  (city: string, n: number) => `МБОУ «Средняя общеобразовательная школа № ${n}» г. ${city}`,
  (city: string) => `Администрация города ${city}`,
  (city: string) => `ФГБОУ ВО «${city === 'Москва' ? 'Московский' : 'Региональный'} государственный университет»`,
  (city: string) => `МКУ «Управление капитального строительства» г. ${city}`,
  (city: string, n: number) => `ГАУЗ «Детская поликлиника № ${n}» г. ${city}`,
  (city: string) => `МУП «Водоканал» г. ${city}`,
];
const EN_BUYERS = [
  (city: string) => `${city} City Council`,
  (city: string) => `${city} University Hospital`,
  (city: string, n: number) => `${city} Public Schools District ${n}`,
  (city: string) => `${city} Metropolitan Transport Authority`,
  (city: string) => `Regional Water Services of ${city}`,
  (city: string) => `${city} Police Department`,
];
const RU_VERB: Record<Kind, string> = { goods: 'Поставка', services: 'Оказание услуг по', works: 'Выполнение работ по' };
const EN_VERB: Record<Kind, string> = { goods: 'Supply of', services: 'Provision of', works: 'Execution of' };
const METHODS = ['open', 'open', 'open', 'selective', 'limited'];

/** A valid 10-digit Russian legal-entity INN (the last digit is its checksum). */
function inn(rand: () => number): string {
  const digits = Array.from({ length: 9 }, () => Math.floor(rand() * 10));
  if (digits[0] === 0) digits[0] = 7;
  const weights = [2, 4, 10, 3, 5, 9, 4, 6, 8];
  const check = (weights.reduce((sum, w, i) => sum + w * digits[i]!, 0) % 11) % 10;
  return [...digits, check].join('');
}

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

function pickCountry(rand: () => number): Country {
  let roll = rand() * TOTAL_WEIGHT;
  for (const country of COUNTRIES) {
    roll -= country.weight;
    if (roll < 0) return country;
  }
  return COUNTRIES[0]!;
}

const money = (amount: number, lang: 'ru' | 'en') =>
  amount.toLocaleString(lang === 'ru' ? 'ru-RU' : 'en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Tender number `index` of the sample set made with `seed`, dated relative to the `reference` day. */
export function sampleTender(index: number, reference: number, seed = SAMPLE_SEED): TenderRecord {
  const rand = random(seed * 1_000_003 + index);
  const country = pickCountry(rand);
  const product = pick(rand, PRODUCTS);
  const city = pick(rand, country.cities);
  const number = 1 + Math.floor(rand() * 180);
  const ru = country.lang === 'ru';
  const buyerName = ru ? pick(rand, RU_BUYERS)(city, number) : pick(rand, EN_BUYERS)(city, number);
  const [low, high] = product.value;
  const amount = Math.round((low + rand() * (high - low)) * 1000 * country.rate * 100) / 100;
  const published = reference - Math.floor(rand() * 700 * DAY) + Math.floor(rand() * DAY);
  const deadline = published + (7 + Math.floor(rand() * 24)) * DAY;
  const status = rand() < 0.03 ? 'cancelled' : deadline < reference - 30 * DAY ? 'complete' : 'active';
  const months = 1 + Math.floor(rand() * 12);
  const sourceId = `${country.code}-${String(index).padStart(7, '0')}`;
  const title = ru ? `${RU_VERB[product.kind]} ${product.ru}, заказчик: ${buyerName}` : `${EN_VERB[product.kind]} ${product.en} for ${buyerName}`;
  const description = ru
    ? `Объект закупки: ${RU_VERB[product.kind].toLowerCase()} ${product.ru} в соответствии с техническим заданием. ` +
      `Место исполнения: г. ${city}. Срок исполнения контракта: ${months} мес. с даты заключения. ` +
      `Начальная (максимальная) цена контракта: ${money(amount, 'ru')} ${country.currency}. ` +
      `Обеспечение заявки: 1% НМЦК; обеспечение исполнения контракта: 5% цены контракта. ` +
      `Код ОКПД2 ${product.okpd2[0]} (${product.okpd2[1]}).`
    : `${EN_VERB[product.kind]} ${product.en} for ${buyerName} in ${city}, as set out in the technical specification. ` +
      `Contract duration: ${months} months. Estimated value: ${money(amount, 'en')} ${country.currency} excluding VAT. ` +
      `Tenders must be submitted electronically before the deadline; the award criterion is the most economically advantageous tender. ` +
      `CPV ${product.cpv[0]} (${product.cpv[1]}).`;
  const classification = [{ scheme: 'CPV', id: product.cpv[0], description: product.cpv[1] }];
  if (ru) classification.unshift({ scheme: 'OKPD2', id: product.okpd2[0], description: product.okpd2[1] });
  return {
    sourceId,
    ocid: `ocds-sample-${sourceId}`,
    country: country.code,
    title,
    description,
    buyerName,
    buyerId: ru ? (country.code === 'RU' ? inn(rand) : String(100_000_000_000 + Math.floor(rand() * 899_999_999_999))) : `${country.code}-ORG-${number}${Math.floor(rand() * 1000)}`,
    valueAmount: amount,
    valueCurrency: country.currency,
    status,
    procurementMethod: pick(rand, METHODS),
    publishedAt: new Date(published).toISOString(),
    deadlineAt: new Date(deadline).toISOString(),
    url: `https://sample.invalid/tenders/${sourceId}`,
    classification,
    raw: { sample: true, generator: 'svc sample data v2', seed, index, reference_day: new Date(reference).toISOString().slice(0, 10) },
    sample: true,
  };
}

export const SAMPLE_COUNTRIES = COUNTRIES.map((c) => c.code);
