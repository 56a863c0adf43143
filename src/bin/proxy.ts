// The round-robin proxy alone (docker-compose.yml's `proxy`): PORT, in front of the main servers in PROXY_UPSTREAMS
// (comma-separated URLs). `npm run start:cluster` runs the same proxy in its own process.
import { z } from 'zod';
import { startProxy } from '../dev/proxy.ts';

const env = z
  .object({
    HOST: z.string().min(1).default('0.0.0.0'),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    PROXY_UPSTREAMS: z.string().transform((value) => value.split(',').map((url) => z.url().parse(url.trim()))),
  })
  .parse(process.env);
const proxy = await startProxy({ host: env.HOST, port: env.PORT, upstreams: env.PROXY_UPSTREAMS });
console.log(`proxy on ${proxy.url} → ${env.PROXY_UPSTREAMS.join(', ')}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void proxy.stop().then(() => process.exit(0)));
