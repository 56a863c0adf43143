// The currencies a deal may be in: the ISO 4217 codes of money in use today, one list for every place a currency
// enters (the marketplace API's deal creation, the widget's). Fixed here rather than read from
// Intl.supportedValuesOf('currency'), whose list depends on the ICU build of the Node.js that runs us and keeps
// withdrawn codes (HRK, SLL, ZWL and others) beside current ones.
//
// ISO 4217 List One as of 2026: every active alphabetic code but the test code XTS, "no currency" XXX, precious metals
// (XAU, XAG, XPD, XPT), bond-market units (XBA to XBD), the SDR and its relatives (XDR, XSU, XUA) and the funds codes
// (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW), none of which is money a buyer pays with. Withdrawn ones are out:
// BGN (Bulgaria took the euro on 1 January 2026), ANG (replaced by XCG), HRK, CUC, SLL, ZWL, VEF, MRO, STD, BYR.
import { z } from 'zod';

export const CURRENCIES = [
  'AED', 'AFN', 'ALL', 'AMD', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BHD', 'BIF', 'BMD', 'BND',
  'BOB', 'BRL', 'BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHF', 'CLP', 'CNY', 'COP', 'CRC', 'CUP', 'CVE',
  'CZK', 'DJF', 'DKK', 'DOP', 'DZD', 'EGP', 'ERN', 'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS', 'GIP', 'GMD',
  'GNF', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR', 'IQD', 'IRR', 'ISK', 'JMD', 'JOD', 'JPY',
  'KES', 'KGS', 'KHR', 'KMF', 'KPW', 'KRW', 'KWD', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'LYD', 'MAD',
  'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MRU', 'MUR', 'MVR', 'MWK', 'MXN', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO',
  'NOK', 'NPR', 'NZD', 'OMR', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'PYG', 'QAR', 'RON', 'RSD', 'RUB', 'RWF',
  'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'SSP', 'STN', 'SVC', 'SYP', 'SZL', 'THB',
  'TJS', 'TMT', 'TND', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH', 'UGX', 'USD', 'UYU', 'UZS', 'VED', 'VES', 'VND',
  'VUV', 'WST', 'XAF', 'XCD', 'XCG', 'XOF', 'XPF', 'YER', 'ZAR', 'ZMW', 'ZWG',
] as const;
export type Currency = (typeof CURRENCIES)[number];

const KNOWN = new Set<string>(CURRENCIES);

export function isCurrency(code: string): code is Currency {
  return KNOWN.has(code);
}

/**
 * A deal's currency as a request gives it: an ISO 4217 code in any case, kept upper-cased. The OpenAPI document lists
 * the codes (upper case, as the deal shows them); anything else is 400 validation_failed naming the field.
 */
export function currencyCode(options: { default?: Currency } = {}) {
  return z
    .string()
    .refine((code) => isCurrency(code.toUpperCase()), { message: 'must be an ISO 4217 code of a currency in use, such as RUB, EUR or USD' })
    .meta({
      enum: [...CURRENCIES],
      description:
        'ISO 4217 code of a currency in use (any case; kept upper-cased). A live marketplace takes only what its acquirer ' +
        'takes: RUB through YooKassa (400 validation_failed otherwise).',
      ...(options.default ? { default: options.default } : {}),
    })
    .transform((code) => code.toUpperCase() as Currency);
}
