// Connectors on fixtures of the documented formats, read through a local double of each remote source.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ocdsConnector } from '../../src/data-api/connectors/ocds.ts';
import { eisConnector } from '../../src/data-api/connectors/eis.ts';
import { tedConnector, tedDate } from '../../src/data-api/connectors/ted.ts';
import { startSourcesDouble, type SourcesDouble } from '../doubles/data-sources.ts';

let double: SourcesDouble;
beforeAll(async () => {
  double = await startSourcesDouble();
});
afterAll(() => double?.stop());

describe('OCDS', () => {
  it('compiles a release package into one tender per contracting process', async () => {
    const page = await ocdsConnector(
      { key: 'o', kind: 'ocds', url: `${double.url}/ocds/package.json`, country: null },
      undefined,
    );
    expect(page.next).toBeUndefined();
    expect(page.records).toHaveLength(1);
    const [tender] = page.records;
    expect(tender).toMatchObject({
      sourceId: 'ocds-213czf-000-00001',
      ocid: 'ocds-213czf-000-00001',
      country: 'GB',
      buyerName: 'London Borough of Barnet',
      buyerId: 'GB-LAC-E09000003',
      valueCurrency: 'GBP',
      procurementMethod: 'open',
    });
    expect(tender.title.length).toBeGreaterThan(5);
    expect(tender.classification).toContainEqual(expect.objectContaining({ scheme: 'CPV', id: '45233162-2' }));
    expect((tender.raw as { ocid: string }).ocid).toBe('ocds-213czf-000-00001');
  });

  it('reads record packages and follows links.next across release packages', async () => {
    const records = await ocdsConnector(
      { key: 'o', kind: 'ocds', url: `${double.url}/ocds/records.json`, country: null },
      undefined,
    );
    expect(records.records.map((r) => r.sourceId)).toEqual(['ocds-213czf-000-00001']);
    const first = await ocdsConnector(
      { key: 'o', kind: 'ocds', url: `${double.url}/ocds/page-1.json`, country: null },
      undefined,
    );
    expect(first.next).toBe(`${double.url}/ocds/page-2.json`);
    const second = await ocdsConnector(
      { key: 'o', kind: 'ocds', url: `${double.url}/ocds/page-1.json`, country: null },
      first.next,
    );
    expect(second.next).toBeUndefined();
    expect(second.records.map((r) => r.sourceId)).toEqual(['ocds-213czf-000-00001']);
  });

  it('refuses a document that is no package, and a failing publisher', async () => {
    double.failing('/ocds/package.json');
    await expect(
      ocdsConnector({ key: 'o', kind: 'ocds', url: `${double.url}/ocds/package.json`, country: null }, undefined),
    ).rejects.toThrow(/answered 500/);
    double.healed('/ocds/package.json');
  });
});

describe('EIS 44-FZ', () => {
  it('maps both generations of notices: registry number, object, price, currency, customer INN, OKPD2, deadline', async () => {
    const page = await eisConnector(
      { key: 'e', kind: 'eis', url: `${double.url}/eis/notices.xml`, country: 'RU' },
      undefined,
    );
    expect(page.records).toHaveLength(2);
    const [current, previous] = page.records;
    expect(current).toMatchObject({
      sourceId: '0373100043224000012',
      country: 'RU',
      title: 'Поставка медицинских изделий (шприцы инъекционные однократного применения)',
      buyerId: '7725012345',
      valueAmount: 1487350.5,
      valueCurrency: 'RUB',
      procurementMethod: 'Электронный аукцион',
      deadlineAt: '2024-02-12T06:00:00.000Z',
      publishedAt: '2024-02-01T07:15:42.123Z',
      classification: [
        { scheme: 'OKPD2', id: '32.50.13.110', description: 'Иглы, катетеры, канюли и аналогичные инструменты' },
      ],
      url: expect.stringContaining('regNumber=0373100043224000012'),
    });
    expect(current.buyerName).toContain('ГОРОДСКАЯ КЛИНИЧЕСКАЯ БОЛЬНИЦА № 12');
    expect(previous).toMatchObject({
      sourceId: '0158300047921000123',
      buyerId: '7421000190',
      buyerName: 'Администрация города Челябинска',
      valueAmount: 25_400_000,
      deadlineAt: '2021-06-21T05:00:00.000Z',
      classification: [{ scheme: 'OKPD2', id: '42.11.20.000', description: expect.any(String) }],
    });
  });

  it('reads the XML documents of a ZIP archive, as the export publishes them, and skips other entries', async () => {
    const plain = await eisConnector(
      { key: 'e', kind: 'eis', url: `${double.url}/eis/notices.xml`, country: 'RU' },
      undefined,
    );
    const zipped = await eisConnector(
      { key: 'e', kind: 'eis', url: `${double.url}/eis/notices.xml.zip`, country: 'RU' },
      undefined,
    );
    expect(zipped.records).toEqual(plain.records);
    expect(zipped.records.map((r) => r.sourceId)).toEqual(['0373100043224000012', '0158300047921000123']);
  });
});

describe('TED v3 search', () => {
  it('pages with iteration tokens and maps the eForms fields', async () => {
    const source = { key: 't', kind: 'ted' as const, url: `${double.url}/ted/v3/notices/search`, country: null };
    const first = await tedConnector(source, undefined);
    expect(first.next).toBe('page-2');
    expect(first.records[0]).toMatchObject({
      sourceId: '00012345-2024',
      country: 'DE',
      title: expect.stringContaining('Resurfacing of federal road B96'),
      buyerName: 'Landesamt für Straßenbau und Verkehr',
      valueAmount: 3_200_000,
      valueCurrency: 'EUR',
      publishedAt: '2024-01-04T23:00:00.000Z',
      deadlineAt: '2024-02-04T23:00:00.000Z',
      url: 'https://ted.europa.eu/en/notice/-/detail/12345-2024',
      classification: [
        { scheme: 'CPV', id: '45233140', description: '' },
        { scheme: 'CPV', id: '45233220', description: '' },
      ],
    });
    expect(first.records[1]).toMatchObject({
      country: 'FR',
      title: expect.stringContaining('Nettoyage'),
      valueAmount: null,
    });
    const second = await tedConnector(source, first.next);
    expect(second.next).toBeUndefined();
    expect(second.records[0]).toMatchObject({ country: 'PL', valueAmount: 850000, valueCurrency: 'PLN' });
    const sent = JSON.parse(double.requests.filter((r) => r.path === '/ted/v3/notices/search').at(-1)!.body);
    expect(sent).toMatchObject({
      paginationMode: 'ITERATION',
      iterationNextToken: 'page-2',
      fields: expect.arrayContaining(['notice-title', 'buyer-country']),
    });
  });

  it('reads TED dates with their offsets', () => {
    expect(tedDate('2024-01-05+01:00')).toBe('2024-01-04T23:00:00.000Z');
    expect(tedDate('2024-01-05Z')).toBe('2024-01-05T00:00:00.000Z');
    expect(tedDate('nonsense')).toBeNull();
  });
});
