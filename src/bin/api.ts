// The main server alone: PORT, marketplace API, widget, SSO, cabinet and administration.
import { createMainApp } from '../main-app.ts';
import { listen } from '../http/server.ts';
import { runStandalone } from './standalone.ts';

await runStandalone('main server', async (services) => {
  const server = await listen(createMainApp(services), services.config.HOST, services.config.PORT);
  services.logger.info({ url: server.url }, 'main server listening');
  return server;
});
