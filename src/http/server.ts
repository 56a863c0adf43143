// Listening and stopping: on stop the server refuses new connections, lets requests in flight finish, then closes.
import http from 'node:http';
import type Koa from 'koa';

export interface RunningServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function listen(app: Koa, host: string, port: number, drainMs = 10_000): Promise<RunningServer> {
  const server = http.createServer(app.callback());
  server.requestTimeout = 60_000;
  server.headersTimeout = 15_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actualPort = (server.address() as import('node:net').AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
    port: actualPort,
    stop: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), drainMs);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
