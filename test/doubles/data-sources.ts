// Local stand-ins for the remote tender sources, in the tests only, serving the documented formats from fixtures:
// an OCDS publisher (release packages linked by `links.next`, a record package), the EIS open-data export (XML, also
// zipped) and the TED v3 search API (POST with ITERATION pagination; a malformed request is 400 as TED answers it).
// failing(path) makes a path answer 500 until healed(path).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { strToU8, zipSync } from 'fflate';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');

export interface SourcesDouble {
  url: string;
  requests: Array<{ method: string; path: string; body: string }>;
  failing(path: string): void;
  healed(path: string): void;
  stop(): Promise<void>;
}

export async function startSourcesDouble(): Promise<SourcesDouble> {
  const failing = new Set<string>();
  const requests: SourcesDouble['requests'] = [];
  let base = '';
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const route = new URL(request.url!, base).pathname;
      requests.push({ method: request.method!, path: route, body });
      const send = (status: number, type: string, content: string | Uint8Array) => {
        response.writeHead(status, { 'Content-Type': type });
        response.end(content);
      };
      if (failing.has(route)) return send(500, 'text/plain', 'upstream trouble');
      if (request.method === 'GET' && route === '/ocds/page-1.json') {
        const page = JSON.parse(fixture('ocds/ocds-213czf-000-00001-02-tender.json'));
        return send(200, 'application/json', JSON.stringify({ ...page, links: { next: `${base}/ocds/page-2.json` } }));
      }
      if (request.method === 'GET' && route === '/ocds/page-2.json')
        return send(200, 'application/json', fixture('ocds/ocds-213czf-000-00001-03-tenderAmendment.json'));
      if (request.method === 'GET' && route === '/ocds/package.json')
        return send(200, 'application/json', fixture('ocds/ocds-213czf-000-00001.json'));
      if (request.method === 'GET' && route === '/ocds/records.json')
        return send(200, 'application/json', fixture('ocds/record-ocds-213czf-000-00001.json'));
      if (request.method === 'GET' && route === '/eis/notices.xml')
        return send(200, 'application/xml; charset=utf-8', fixture('eis/notices-44fz.xml'));
      if (request.method === 'GET' && route === '/eis/notices.xml.zip') {
        // As the export ships them: a ZIP of XML documents, with signature files beside them.
        const archive = zipSync({
          'notification_Moskva_2024020100_2024020200_001.xml': strToU8(fixture('eis/notices-44fz.xml')),
          'notification_001.xml.sig': strToU8('signature'),
        });
        return send(200, 'application/zip', archive);
      }
      if (request.method === 'POST' && route === '/ted/v3/notices/search') {
        let search: { query?: unknown; fields?: unknown; paginationMode?: string; iterationNextToken?: string };
        try {
          search = JSON.parse(body);
        } catch {
          return send(400, 'application/json', JSON.stringify({ message: 'Malformed JSON' }));
        }
        if (
          typeof search.query !== 'string' ||
          !Array.isArray(search.fields) ||
          search.paginationMode !== 'ITERATION'
        ) {
          return send(
            400,
            'application/json',
            JSON.stringify({ message: 'query, fields and paginationMode are required' }),
          );
        }
        const page = search.iterationNextToken === 'page-2' ? 'ted/search-page-2.json' : 'ted/search-page-1.json';
        return send(200, 'application/json', fixture(page));
      }
      send(404, 'text/plain', 'not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    failing: (p) => failing.add(p),
    healed: (p) => failing.delete(p),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
