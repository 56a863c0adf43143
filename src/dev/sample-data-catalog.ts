// What the sample tenders are made of: the goods, works and services public buyers buy (with their real CPV and
// OKPD2 codes and labels, and value ranges), the kinds of buyers and what each kind buys, and the countries with their
// language, currency and procurement law. The generator (sample-data.ts) combines them; the relevance benchmark
// (bench/relevance-judgments.ts) judges by the product and place each tender was made from.

export type ProductKey =
  | 'medicines'
  | 'medical_consumables'
  | 'medical_equipment'
  | 'computers'
  | 'office_supplies'
  | 'diesel'
  | 'petrol'
  | 'food'
  | 'vehicles'
  | 'furniture'
  | 'textbooks'
  | 'workwear'
  | 'building_materials'
  | 'software'
  | 'mobile_phones'
  | 'electricity'
  | 'cleaning'
  | 'security'
  | 'catering'
  | 'it_support'
  | 'vehicle_maintenance'
  | 'motor_insurance'
  | 'school_transport'
  | 'training'
  | 'design'
  | 'road_repair'
  | 'refurbishment'
  | 'school_construction'
  | 'water_mains'
  | 'ventilation'
  | 'landscaping';

export type Kind = 'goods' | 'services' | 'works';

export interface Product {
  kind: Kind;
  cpv: [code: string, label: string];
  okpd2: [code: string, label: string];
  /** Objects of the Russian title, in the case its verb needs («Поставка лекарственных препаратов»). */
  ru: string[];
  en: string[];
  /** Estimated value, in thousands of euros. */
  value: [number, number];
}

export const PRODUCTS: Record<ProductKey, Product> = {
  medicines: {
    kind: 'goods',
    cpv: ['33600000-6', 'Pharmaceutical products'],
    okpd2: ['21.20.10', 'Препараты лекарственные'],
    ru: [
      'лекарственных препаратов для медицинского применения',
      'лекарственного препарата (МНН: Амоксициллин + Клавулановая кислота)',
      'лекарственных препаратов (инсулины)',
    ],
    en: ['pharmaceutical products', 'medicinal products for hospital pharmacy', 'antibiotics and anti-infectives'],
    value: [30, 2500],
  },
  medical_consumables: {
    kind: 'goods',
    cpv: ['33140000-3', 'Medical consumables'],
    okpd2: [
      '32.50.13.190',
      'Инструменты и приспособления, применяемые в медицинских целях, прочие, не включенные в другие группировки',
    ],
    ru: ['медицинских изделий (шприцы, катетеры, системы для инфузий)', 'расходных материалов для медицинских изделий'],
    en: ['medical consumables', 'single-use syringes, catheters and infusion sets'],
    value: [10, 600],
  },
  medical_equipment: {
    kind: 'goods',
    cpv: ['33100000-1', 'Medical equipments'],
    okpd2: [
      '26.60.1',
      'Оборудование для облучения, электрическое диагностическое и терапевтическое, применяемые в медицинских целях',
    ],
    ru: [
      'медицинского оборудования (аппарат ультразвуковой диагностики)',
      'медицинского оборудования (аппарат искусственной вентиляции легких)',
    ],
    en: ['medical equipment: ultrasound scanners', 'diagnostic imaging equipment'],
    value: [60, 4000],
  },
  computers: {
    kind: 'goods',
    cpv: ['30213000-5', 'Personal computers'],
    okpd2: ['26.20.11', 'Компьютеры портативные массой не более 10 кг'],
    ru: ['ноутбуков', 'персональных компьютеров и мониторов'],
    en: ['laptops', 'desktop computers and monitors'],
    value: [15, 500],
  },
  office_supplies: {
    kind: 'goods',
    cpv: ['30192000-1', 'Office supplies'],
    okpd2: ['17.23.13.199', 'Принадлежности канцелярские прочие из бумаги'],
    ru: ['канцелярских товаров', 'бумаги для офисной техники и канцелярских принадлежностей'],
    en: ['office supplies', 'stationery and copier paper'],
    value: [2, 60],
  },
  diesel: {
    kind: 'goods',
    cpv: ['09134100-8', 'Diesel oil'],
    okpd2: ['19.20.21.300', 'Топливо дизельное'],
    ru: ['дизельного топлива', 'дизельного топлива (ДТ-Л-К5) по топливным картам'],
    en: ['diesel fuel', 'bulk diesel fuel deliveries'],
    value: [40, 1800],
  },
  petrol: {
    kind: 'goods',
    cpv: ['09132000-3', 'Petrol'],
    okpd2: ['19.20.21.100', 'Бензин автомобильный'],
    ru: ['бензина автомобильного АИ-92 и АИ-95', 'автомобильного бензина по топливным картам'],
    en: ['petrol through fuel cards', 'unleaded petrol'],
    value: [20, 900],
  },
  food: {
    kind: 'goods',
    cpv: ['15800000-6', 'Miscellaneous food products'],
    okpd2: ['10.89.19', 'Продукты пищевые прочие, не включенные в другие группировки'],
    ru: ['продуктов питания', 'молочной продукции и продуктов питания'],
    en: ['food products', 'fresh and frozen food'],
    value: [10, 800],
  },
  vehicles: {
    kind: 'goods',
    cpv: ['34110000-1', 'Passenger cars'],
    okpd2: ['29.10.2', 'Автомобили легковые'],
    ru: ['легковых автомобилей', 'легкового автомобиля'],
    en: ['passenger cars', 'fleet vehicles'],
    value: [25, 700],
  },
  furniture: {
    kind: 'goods',
    cpv: ['39130000-2', 'Office furniture'],
    okpd2: ['31.01.1', 'Мебель для офисов и предприятий торговли'],
    ru: ['офисной мебели', 'мебели для учебных кабинетов'],
    en: ['office furniture', 'classroom furniture'],
    value: [5, 300],
  },
  textbooks: {
    kind: 'goods',
    cpv: ['22112000-8', 'Textbooks'],
    okpd2: ['58.11.1', 'Книги печатные'],
    ru: ['учебников', 'учебной литературы'],
    en: ['school textbooks', 'textbooks and learning materials'],
    value: [5, 400],
  },
  workwear: {
    kind: 'goods',
    cpv: ['18110000-3', 'Occupational clothing'],
    okpd2: ['14.12', 'Спецодежда'],
    ru: ['специальной одежды', 'спецодежды и средств индивидуальной защиты'],
    en: ['workwear', 'protective clothing and uniforms'],
    value: [3, 200],
  },
  building_materials: {
    kind: 'goods',
    cpv: ['44111000-1', 'Building materials'],
    okpd2: ['23.51.12', 'Портландцемент, цемент глиноземистый, цемент шлаковый и аналогичные гидравлические цементы'],
    ru: ['строительных материалов', 'цемента и сухих строительных смесей'],
    en: ['building materials', 'cement and aggregates'],
    value: [10, 600],
  },
  software: {
    kind: 'goods',
    cpv: ['48000000-8', 'Software package and information systems'],
    okpd2: ['58.29.29', 'Обеспечение программное прикладное прочее на электронном носителе'],
    ru: ['неисключительных прав на программное обеспечение', 'лицензий на антивирусное программное обеспечение'],
    en: ['software licences', 'office software licences'],
    value: [10, 1000],
  },
  mobile_phones: {
    kind: 'goods',
    cpv: ['32250000-0', 'Mobile telephones'],
    okpd2: ['26.30.22', 'Аппараты телефонные для сотовых сетей связи или для прочих беспроводных сетей'],
    ru: ['смартфонов', 'средств связи (мобильных телефонов)'],
    en: ['mobile phones', 'smartphones'],
    value: [5, 250],
  },
  electricity: {
    kind: 'goods',
    cpv: ['09310000-5', 'Electricity'],
    okpd2: ['35.11.10', 'Электроэнергия'],
    ru: ['электрической энергии', 'электроэнергии для нужд учреждения'],
    en: ['electricity', 'electricity supply for council buildings'],
    value: [80, 5000],
  },
  cleaning: {
    kind: 'services',
    cpv: ['90910000-9', 'Cleaning services'],
    okpd2: ['81.21.10', 'Услуги по общей уборке зданий'],
    ru: ['уборке помещений', 'комплексной уборке зданий'],
    en: ['cleaning services', 'office cleaning services'],
    value: [10, 600],
  },
  security: {
    kind: 'services',
    cpv: ['79710000-4', 'Security services'],
    okpd2: ['80.10.12', 'Услуги охраны'],
    ru: ['охране объектов', 'физической охране здания'],
    en: ['security services', 'manned guarding services'],
    value: [20, 900],
  },
  catering: {
    kind: 'services',
    cpv: ['55520000-1', 'Catering services'],
    okpd2: ['56.29.20', 'Услуги по обеспечению питанием'],
    ru: ['организации горячего питания обучающихся', 'организации питания пациентов'],
    en: ['catering services', 'school meals catering'],
    value: [30, 1500],
  },
  it_support: {
    kind: 'services',
    cpv: ['72267000-4', 'Software maintenance and repair services'],
    okpd2: ['62.02.30', 'Услуги по технической поддержке информационных технологий'],
    ru: ['сопровождению информационной системы', 'технической поддержке программного обеспечения'],
    en: ['information system maintenance', 'IT support and software maintenance'],
    value: [20, 1200],
  },
  vehicle_maintenance: {
    kind: 'services',
    cpv: ['50112000-3', 'Repair and maintenance services of cars'],
    okpd2: [
      '45.20.1',
      'Услуги по техническому обслуживанию и ремонту легковых автомобилей и легких грузовых автотранспортных средств',
    ],
    ru: ['техническому обслуживанию и ремонту автомобилей', 'техническому обслуживанию служебного автотранспорта'],
    en: ['vehicle maintenance and repair', 'fleet maintenance services'],
    value: [5, 200],
  },
  motor_insurance: {
    kind: 'services',
    cpv: ['66514110-0', 'Motor vehicle insurance services'],
    okpd2: [
      '65.12.21',
      'Услуги по обязательному страхованию гражданской ответственности владельцев транспортных средств',
    ],
    ru: [
      'обязательному страхованию гражданской ответственности владельцев транспортных средств (ОСАГО)',
      'страхованию служебного автотранспорта',
    ],
    en: ['motor vehicle insurance', 'fleet insurance services'],
    value: [2, 120],
  },
  school_transport: {
    kind: 'services',
    cpv: ['60130000-8', 'Special-purpose road passenger-transport services'],
    okpd2: [
      '49.39.39',
      'Услуги по перевозке пассажиров сухопутным транспортом прочие, не включенные в другие группировки',
    ],
    ru: ['перевозке обучающихся (школьные перевозки)', 'организованной перевозке групп детей автобусами'],
    en: ['home-to-school transport', 'school bus services'],
    value: [20, 1000],
  },
  training: {
    kind: 'services',
    cpv: ['80530000-8', 'Vocational training services'],
    okpd2: ['85.42.19', 'Услуги по дополнительному профессиональному образованию прочие'],
    ru: ['обучению по программам повышения квалификации', 'обучению специалистов по охране труда'],
    en: ['staff training', 'professional development courses'],
    value: [3, 120],
  },
  design: {
    kind: 'services',
    cpv: ['71240000-2', 'Architectural, engineering and planning services'],
    okpd2: ['71.12.12', 'Услуги по инженерно-техническому проектированию зданий'],
    ru: ['подготовке проектной документации', 'разработке проектно-сметной документации на капитальный ремонт'],
    en: ['architectural and engineering design services', 'design services for a new library'],
    value: [30, 2000],
  },
  road_repair: {
    kind: 'works',
    cpv: ['45233140-2', 'Roadworks'],
    okpd2: [
      '42.11.20',
      'Работы строительные по строительству автомагистралей, автомобильных дорог, улично-дорожной сети',
    ],
    ru: ['ремонту автомобильных дорог', 'ремонту асфальтобетонного покрытия улиц'],
    en: ['road resurfacing works', 'carriageway repair works'],
    value: [200, 15000],
  },
  refurbishment: {
    kind: 'works',
    cpv: ['45453000-7', 'Overhaul and refurbishment work'],
    okpd2: [
      '43.39.19',
      'Работы завершающие и отделочные в зданиях и сооружениях, прочие, не включенные в другие группировки',
    ],
    ru: ['капитальному ремонту здания', 'текущему ремонту помещений'],
    en: ['building refurbishment works', 'refurbishment of office buildings'],
    value: [100, 8000],
  },
  school_construction: {
    kind: 'works',
    cpv: ['45214200-2', 'Construction work for school buildings'],
    okpd2: ['41.20.40', 'Работы строительные по возведению нежилых зданий и сооружений'],
    ru: ['строительству здания общеобразовательной школы', 'строительству школы на 1100 мест'],
    en: ['construction of a new primary school', 'school building construction works'],
    value: [3000, 60000],
  },
  water_mains: {
    kind: 'works',
    cpv: ['45232150-8', 'Works related to water-distribution pipelines'],
    okpd2: ['42.21.22', 'Работы строительные по строительству магистральных трубопроводов для жидкостей'],
    ru: ['реконструкции водопроводных сетей', 'капитальному ремонту водовода'],
    en: ['water mains renewal works', 'water pipeline replacement works'],
    value: [150, 10000],
  },
  ventilation: {
    kind: 'works',
    cpv: ['45331000-6', 'Heating, ventilation and air-conditioning installation work'],
    okpd2: ['43.22.12.140', 'Работы по монтажу систем вентиляции и кондиционирования воздуха'],
    ru: ['монтажу систем вентиляции и кондиционирования', 'замене системы вентиляции'],
    en: ['ventilation and air-conditioning installation', 'HVAC replacement works'],
    value: [40, 2500],
  },
  landscaping: {
    kind: 'works',
    cpv: ['45112700-2', 'Landscaping work'],
    okpd2: ['81.30.10', 'Услуги по планировке ландшафта'],
    ru: ['благоустройству общественной территории', 'благоустройству дворовых территорий'],
    en: ['landscaping works', 'park improvement and landscaping works'],
    value: [20, 2500],
  },
};

export type BuyerKind =
  'hospital' | 'clinic' | 'school' | 'city' | 'construction' | 'university' | 'water' | 'grid' | 'police';

/** What each kind of buyer buys. */
export const BUYS: Record<BuyerKind, ProductKey[]> = {
  hospital: [
    'medicines',
    'medicines',
    'medicines',
    'medical_consumables',
    'medical_consumables',
    'medical_equipment',
    'food',
    'catering',
    'cleaning',
    'security',
    'electricity',
    'refurbishment',
    'ventilation',
    'it_support',
  ],
  clinic: [
    'medicines',
    'medical_consumables',
    'medical_equipment',
    'cleaning',
    'computers',
    'office_supplies',
    'refurbishment',
  ],
  school: [
    'textbooks',
    'textbooks',
    'office_supplies',
    'furniture',
    'catering',
    'food',
    'computers',
    'cleaning',
    'security',
    'school_transport',
    'refurbishment',
  ],
  city: [
    'road_repair',
    'road_repair',
    'landscaping',
    'landscaping',
    'vehicles',
    'software',
    'office_supplies',
    'motor_insurance',
    'electricity',
    'petrol',
    'design',
    'cleaning',
    'computers',
    'training',
  ],
  construction: [
    'school_construction',
    'refurbishment',
    'design',
    'water_mains',
    'ventilation',
    'road_repair',
    'building_materials',
  ],
  university: [
    'computers',
    'software',
    'it_support',
    'training',
    'furniture',
    'cleaning',
    'security',
    'ventilation',
    'refurbishment',
    'textbooks',
  ],
  water: [
    'water_mains',
    'water_mains',
    'diesel',
    'electricity',
    'workwear',
    'vehicle_maintenance',
    'building_materials',
    'motor_insurance',
  ],
  grid: ['workwear', 'diesel', 'vehicles', 'vehicle_maintenance', 'building_materials', 'software', 'motor_insurance'],
  police: ['vehicles', 'petrol', 'diesel', 'vehicle_maintenance', 'workwear', 'mobile_phones', 'training', 'software'],
};

export interface Country {
  code: string;
  lang: 'ru' | 'en';
  currency: string;
  /** Currency units per euro, rounded. */
  rate: number;
  weight: number;
  cities: string[];
  buyers: Partial<Record<BuyerKind, (city: string, n: number) => string>>;
  /** The law a buyer of this kind buys under, published on this date. */
  law: (kind: BuyerKind, published: Date) => string;
  /** How a tender under that law says so. */
  lawText: (law: string) => string;
}

const GENITIVE: Record<string, string> = {
  Москва: 'Москвы',
  'Санкт-Петербург': 'Санкт-Петербурга',
  Казань: 'Казани',
  Новосибирск: 'Новосибирска',
  Екатеринбург: 'Екатеринбурга',
  'Нижний Новгород': 'Нижнего Новгорода',
  Самара: 'Самары',
  Краснодар: 'Краснодара',
  Пермь: 'Перми',
  Томск: 'Томска',
};
const ADJECTIVE: Record<string, string> = {
  Москва: 'Московский',
  'Санкт-Петербург': 'Санкт-Петербургский',
  Казань: 'Казанский',
  Новосибирск: 'Новосибирский',
  Екатеринбург: 'Уральский',
  'Нижний Новгород': 'Нижегородский',
  Самара: 'Самарский',
  Краснодар: 'Кубанский',
  Пермь: 'Пермский',
  Томск: 'Томский',
  Минск: 'Белорусский',
  Гомель: 'Гомельский',
  Брест: 'Брестский',
  Витебск: 'Витебский',
};

const RU_LAW_TEXT: Record<string, string> = {
  '44-fz': 'Закупка осуществляется в соответствии с Федеральным законом от 05.04.2013 № 44-ФЗ',
  '223-fz':
    'Закупка осуществляется в соответствии с Федеральным законом от 18.07.2011 № 223-ФЗ и положением о закупке заказчика',
};

export const COUNTRIES: Country[] = [
  {
    code: 'RU',
    lang: 'ru',
    currency: 'RUB',
    rate: 95,
    weight: 45,
    cities: [
      'Москва',
      'Санкт-Петербург',
      'Казань',
      'Новосибирск',
      'Екатеринбург',
      'Нижний Новгород',
      'Самара',
      'Краснодар',
      'Пермь',
      'Томск',
    ],
    buyers: {
      hospital: (city, n) => `ГБУЗ «Городская клиническая больница № ${n}» (г. ${city})`,
      clinic: (city, n) => `ГАУЗ «Детская городская поликлиника № ${n}» (г. ${city})`,
      school: (city, n) => `МБОУ «Средняя общеобразовательная школа № ${n}» (г. ${city})`,
      city: (city) => `Администрация города ${GENITIVE[city]}`,
      construction: (city) => `МКУ «Управление капитального строительства» (г. ${city})`,
      university: (city) => `ФГБОУ ВО «${ADJECTIVE[city]} государственный технический университет»`,
      water: (city) => `МУП «Водоканал» (г. ${city})`,
      grid: (city) => `АО «Городские электрические сети» (г. ${city})`,
    },
    // Autonomous institutions and state-owned companies buy under 223-FZ; budget and government bodies under 44-FZ.
    law: (kind) => (kind === 'clinic' || kind === 'grid' ? '223-fz' : '44-fz'),
    lawText: (law) => RU_LAW_TEXT[law],
  },
  {
    code: 'KZ',
    lang: 'ru',
    currency: 'KZT',
    rate: 520,
    weight: 10,
    cities: ['Астана', 'Алматы', 'Караганда', 'Шымкент'],
    buyers: {
      hospital: (city, n) => `ГКП на ПХВ «Городская многопрофильная больница № ${n}» (г. ${city})`,
      school: (city, n) => `КГУ «Общеобразовательная школа № ${n}» (г. ${city})`,
      city: (city) => `ГУ «Отдел жилищно-коммунального хозяйства и пассажирского транспорта» (г. ${city})`,
      construction: (city) => `ГУ «Управление строительства» (г. ${city})`,
      water: (city) => `ГКП «Водоканал» (г. ${city})`,
    },
    law: () => 'kz-106-viii',
    lawText: () =>
      'Закупка осуществляется в соответствии с Законом Республики Казахстан от 01.07.2024 № 106-VIII «О государственных закупках»',
  },
  {
    code: 'BY',
    lang: 'ru',
    currency: 'BYN',
    rate: 3.5,
    weight: 7,
    cities: ['Минск', 'Гомель', 'Брест', 'Витебск'],
    buyers: {
      hospital: (city, n) => `УЗ «Городская клиническая больница № ${n}» (г. ${city})`,
      school: (city, n) => `ГУО «Средняя школа № ${n}» (г. ${city})`,
      city: (city) => `КУП «Жилищное коммунальное хозяйство» (г. ${city})`,
      water: (city) => `УП «Водоканал» (г. ${city})`,
      university: (city) => `УО «${ADJECTIVE[city]} государственный университет»`,
    },
    law: () => 'by-419-z',
    lawText: () =>
      'Процедура проводится в соответствии с Законом Республики Беларусь от 13.07.2012 № 419-З «О государственных закупках товаров (работ, услуг)»',
  },
  {
    code: 'KG',
    lang: 'ru',
    currency: 'KGS',
    rate: 95,
    weight: 3,
    cities: ['Бишкек', 'Ош'],
    buyers: {
      hospital: (city, n) => `Городская клиническая больница № ${n} (г. ${city})`,
      school: (city, n) => `Средняя общеобразовательная школа № ${n} (г. ${city})`,
      city: (city) => `Мэрия города ${city}`,
    },
    law: () => 'kg-27',
    lawText: () =>
      'Закупка проводится в соответствии с Законом Кыргызской Республики от 14.04.2022 № 27 «О государственных закупках»',
  },
  {
    // Scotland has its own procurement rules; these cities are in England.
    code: 'GB',
    lang: 'en',
    currency: 'GBP',
    rate: 0.85,
    weight: 20,
    cities: ['London', 'Manchester', 'Leeds', 'Bristol', 'Birmingham'],
    buyers: {
      hospital: (city) => `${city} University Hospitals NHS Foundation Trust`,
      school: (city) => `${city} Learning Partnership Academy Trust`,
      city: (city) => `${city} City Council`,
      university: (city) => `University of ${city}`,
      police: (city) =>
        `${({ London: 'Metropolitan', Manchester: 'Greater Manchester', Leeds: 'West Yorkshire', Bristol: 'Avon and Somerset', Birmingham: 'West Midlands' } as Record<string, string>)[city]} Police`,
    },
    // The Procurement Act 2023 replaced the Public Contracts Regulations 2015 on 24 February 2025.
    law: (_kind, published) => (published >= new Date('2025-02-24') ? 'uk-pa-2023' : 'uk-pcr-2015'),
    lawText: (law) =>
      law === 'uk-pa-2023'
        ? 'This procurement is carried out under the Procurement Act 2023.'
        : 'This procurement is carried out under the Public Contracts Regulations 2015.',
  },
  {
    code: 'IE',
    lang: 'en',
    currency: 'EUR',
    rate: 1,
    weight: 10,
    cities: ['Dublin', 'Cork', 'Galway', 'Limerick'],
    buyers: {
      hospital: (city) => `University Hospital ${city}`,
      school: (city) => `${city} Education and Training Board`,
      city: (city) => `${city} City Council`,
      university: (city) => `University of ${city}`,
      water: () => 'Uisce Éireann',
    },
    law: () => 'eu-2014-24',
    lawText: () => 'The contract is awarded under Directive 2014/24/EU as transposed by S.I. No. 284 of 2016.',
  },
  {
    code: 'MT',
    lang: 'en',
    currency: 'EUR',
    rate: 1,
    weight: 5,
    cities: ['Valletta', 'Msida', 'Birkirkara'],
    buyers: {
      hospital: () => 'Mater Dei Hospital',
      school: () => 'Foundation for Tomorrow’s Schools',
      city: (city) => `${city} Local Council`,
      construction: () => 'Infrastructure Malta',
      university: () => 'University of Malta',
    },
    law: () => 'eu-2014-24',
    lawText: () =>
      'The contract is awarded under Directive 2014/24/EU as transposed by the Public Procurement Regulations (S.L. 601.03).',
  },
];
