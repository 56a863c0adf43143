// The load balancer of `npm run start:cluster`: round robin over the main servers, so consecutive requests land on
// different instances. A request an instance refused at connect (it is down) goes to the next one, as a load
// balancer's health checks would arrange; one that reached an instance that then died answers 502, and the client
// retries, as it would in production.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningProxy {
  url: string;
  stop(): Promise<void>;
}

export async function startProxy(options: { host: string; port: number; upstreams: string[] }): Promise<RunningProxy> {
  let next = 0;
  // A main server closes a connection idle for its keep-alive timeout (5 s, announced as `Keep-Alive: timeout=5`); a
  // request sent on that connection as it closes fails with ECONNRESET, which would answer 502 for nothing. Node's agent
  // gives a pooled connection up a second before the announced timeout, but only when it has a timeout of its own
  // (without one it ignores the announcement): 60 s, the main servers' request timeout, on a request in flight.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 60_000 });
  const forward = (request: http.IncomingMessage, response: http.ServerResponse, body: Buffer, tries: number) => {
    const upstream = new URL(options.upstreams[next++ % options.upstreams.length]);
    const headers = {
      ...request.headers,
      'x-forwarded-for': [request.headers['x-forwarded-for'], request.socket.remoteAddress].filter(Boolean).join(', '),
    };
    const outgoing = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers, agent },
      (answer) => {
        response.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(response);
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' && tries < options.upstreams.length)
        return forward(request, response, body, tries + 1);
      if (!response.headersSent) {
        response.writeHead(502, { 'Content-Type': 'application/problem+json' });
        response.end(
          JSON.stringify({
            type: 'about:blank',
            title: 'Bad Gateway',
            status: 502,
            detail: 'The main server went away; retry.',
            code: 'bad_gateway',
          }),
        );
      } else {
        response.destroy();
      }
    });
    outgoing.end(body);
  };
  // The body is read whole first, so that a request can go to another instance when the first refuses it.
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => forward(request, response, Buffer.concat(chunks), 1));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  return {
    // The port it got: the one asked for, or one the system chose for port 0.
    url: `http://${options.host}:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
