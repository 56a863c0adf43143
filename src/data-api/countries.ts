// Country names (English, Russian) and ISO 3166-1 alpha-3 → alpha-2, for sources that use alpha-3 (TED) or names (OCDS).
const COUNTRIES: Array<[alpha2: string, alpha3: string, en: string, ru: string]> = [
  ['RU', 'RUS', 'Russia', 'Россия'],
  ['KZ', 'KAZ', 'Kazakhstan', 'Казахстан'],
  ['BY', 'BLR', 'Belarus', 'Беларусь'],
  ['UZ', 'UZB', 'Uzbekistan', 'Узбекистан'],
  ['KG', 'KGZ', 'Kyrgyzstan', 'Киргизия'],
  ['AM', 'ARM', 'Armenia', 'Армения'],
  ['GB', 'GBR', 'United Kingdom', 'Великобритания'],
  ['DE', 'DEU', 'Germany', 'Германия'],
  ['FR', 'FRA', 'France', 'Франция'],
  ['PL', 'POL', 'Poland', 'Польша'],
  ['ES', 'ESP', 'Spain', 'Испания'],
  ['IT', 'ITA', 'Italy', 'Италия'],
  ['NL', 'NLD', 'Netherlands', 'Нидерланды'],
  ['BE', 'BEL', 'Belgium', 'Бельгия'],
  ['AT', 'AUT', 'Austria', 'Австрия'],
  ['CZ', 'CZE', 'Czechia', 'Чехия'],
  ['SE', 'SWE', 'Sweden', 'Швеция'],
  ['FI', 'FIN', 'Finland', 'Финляндия'],
  ['DK', 'DNK', 'Denmark', 'Дания'],
  ['PT', 'PRT', 'Portugal', 'Португалия'],
  ['IE', 'IRL', 'Ireland', 'Ирландия'],
  ['GR', 'GRC', 'Greece', 'Греция'],
  ['RO', 'ROU', 'Romania', 'Румыния'],
  ['HU', 'HUN', 'Hungary', 'Венгрия'],
  ['BG', 'BGR', 'Bulgaria', 'Болгария'],
  ['SK', 'SVK', 'Slovakia', 'Словакия'],
  ['SI', 'SVN', 'Slovenia', 'Словения'],
  ['HR', 'HRV', 'Croatia', 'Хорватия'],
  ['LT', 'LTU', 'Lithuania', 'Литва'],
  ['LV', 'LVA', 'Latvia', 'Латвия'],
  ['EE', 'EST', 'Estonia', 'Эстония'],
  ['LU', 'LUX', 'Luxembourg', 'Люксембург'],
  ['CY', 'CYP', 'Cyprus', 'Кипр'],
  ['MT', 'MLT', 'Malta', 'Мальта'],
  ['NO', 'NOR', 'Norway', 'Норвегия'],
  ['CH', 'CHE', 'Switzerland', 'Швейцария'],
  ['IS', 'ISL', 'Iceland', 'Исландия'],
  ['US', 'USA', 'United States', 'США'],
  ['CA', 'CAN', 'Canada', 'Канада'],
  ['GE', 'GEO', 'Georgia', 'Грузия'],
  ['UA', 'UKR', 'Ukraine', 'Украина'],
  ['MD', 'MDA', 'Moldova', 'Молдова'],
  ['IN', 'IND', 'India', 'Индия'],
  ['CN', 'CHN', 'China', 'Китай'],
  ['BR', 'BRA', 'Brazil', 'Бразилия'],
  ['MX', 'MEX', 'Mexico', 'Мексика'],
  ['CO', 'COL', 'Colombia', 'Колумбия'],
  ['PY', 'PRY', 'Paraguay', 'Парагвай'],
  ['NG', 'NGA', 'Nigeria', 'Нигерия'],
  ['ZA', 'ZAF', 'South Africa', 'ЮАР'],
  ['AU', 'AUS', 'Australia', 'Австралия'],
];

const byAlpha2 = new Map(COUNTRIES.map(([a2, , en, ru]) => [a2, { en, ru }]));
const alpha3To2 = new Map(COUNTRIES.map(([a2, a3]) => [a3, a2]));
const nameTo2 = new Map(
  COUNTRIES.flatMap(([a2, , en, ru]) => [
    [en.toLowerCase(), a2],
    [ru.toLowerCase(), a2],
  ]),
);

export function countryNames(alpha2: string): { en: string; ru: string } {
  return byAlpha2.get(alpha2) ?? { en: alpha2, ru: alpha2 };
}

/** An alpha-2 code from alpha-2, alpha-3 or an English or Russian name; undefined when unknown. */
export function toAlpha2(value: string | undefined | null): string | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^[A-Za-z]{2}$/.test(trimmed)) return trimmed.toUpperCase();
  if (/^[A-Za-z]{3}$/.test(trimmed)) return alpha3To2.get(trimmed.toUpperCase());
  return nameTo2.get(trimmed.toLowerCase());
}
