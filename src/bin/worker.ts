// The Temporal worker alone. It also registers the data sources and their sync schedules (idempotent).
import { startWorker } from '../worker.ts';
import { configureDataSources } from '../data-api/sync.ts';
import { runStandalone } from './standalone.ts';

await runStandalone('worker', async (services) => {
  const worker = await startWorker(services);
  await configureDataSources(services);
  return worker;
});
