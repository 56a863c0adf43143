// A marketplace's webhook receiver for tests: records every request's raw bytes and headers, and answers from a
// script (then 200).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers for the next requests, in order; after them every request gets 200. */
  script: Answer[];
  stop(): Promise<void>;
}

export async function startReceiver(script: Answer[] = []): Promise<Receiver> {
  const receiver = { received: [] as Received[], script: [...script] };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receiver.received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      });
      const answer = receiver.script.shift() ?? { status: 200 };
      response.writeHead(answer.status, { 'Content-Type': 'text/plain', ...answer.headers });
      response.end(answer.status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks/svc`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
