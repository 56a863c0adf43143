// The connector of each source kind.
import type { Connector, SourceConfig } from './types.ts';
import { ocdsConnector } from './ocds.ts';
import { eisConnector } from './eis.ts';
import { tedConnector } from './ted.ts';

export const CONNECTORS: Record<SourceConfig['kind'], Connector> = {
  ocds: ocdsConnector,
  eis: eisConnector,
  ted: tedConnector,
};
export type { Connector, Page, SourceConfig } from './types.ts';
