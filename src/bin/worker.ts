// The Temporal worker alone.
import { startWorker } from '../worker.ts';
import { runStandalone } from './standalone.ts';

await runStandalone('worker', (services) => startWorker(services));
