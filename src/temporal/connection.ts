// How the client and the worker reach Temporal: the dev server in plain gRPC, or a cluster / Temporal Cloud with TLS
// and an API key.
import type { Config } from '../config.ts';

export interface TemporalConnectionOptions {
  address: string;
  tls?: boolean;
  apiKey?: string;
}

export function temporalConnectionOptions(config: Config): TemporalConnectionOptions {
  const tls =
    config.TEMPORAL_TLS === 'true' || (config.TEMPORAL_TLS === undefined && config.TEMPORAL_API_KEY !== undefined);
  return {
    address: config.TEMPORAL_ADDRESS!,
    ...(tls ? { tls: true } : {}),
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}
