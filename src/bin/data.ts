// The data server alone: DATA_PORT, the data API (/v1) and MCP (/mcp/).
import { createDataApp } from '../data-app.ts';
import { listen } from '../http/server.ts';
import { runStandalone } from './standalone.ts';

await runStandalone('data server', async (services) => {
  const server = await listen(createDataApp(services), services.config.HOST, services.config.DATA_PORT);
  services.logger.info({ url: server.url }, 'data server listening');
  return server;
});
