// The worker bundles workflows/, registers the search attributes and polls its task queue on the real dev server,
// and stops cleanly.
import { afterAll, describe, expect, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { createLogger } from '../../src/log.ts';
import { createServices } from '../../src/services.ts';
import { startWorker } from '../../src/worker.ts';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes.ts';
import { testConfig } from '../helpers.ts';

const config = testConfig();
const services = createServices(config, createLogger('silent'));
afterAll(() => services.close());

async function pollerCount(connection: Connection, kind: 1 | 2): Promise<number> {
  const response = await connection.workflowService.describeTaskQueue({
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: { name: config.TEMPORAL_TASK_QUEUE },
    taskQueueType: kind, // 1: workflow tasks, 2: activity tasks
  });
  return response.pollers?.length ?? 0;
}

describe('the worker', () => {
  it('polls its task queue for workflow and activity tasks, then drains and stops', async () => {
    const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    try {
      const worker = await startWorker(services);
      expect(worker.worker.getState()).toBe('RUNNING');
      await expect.poll(() => pollerCount(connection, 1), { timeout: 20_000 }).toBeGreaterThan(0);
      await expect.poll(() => pollerCount(connection, 2), { timeout: 20_000 }).toBeGreaterThan(0);
      await worker.stop();
      expect(worker.worker.getState()).toBe('STOPPED');
    } finally {
      await connection.close();
    }
  });

  it('finds the deal search attributes on the namespace with their types', async () => {
    const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({
        namespace: config.TEMPORAL_NAMESPACE,
      });
      // Keyword = 2, Double = 4 in IndexedValueType.
      const expected = Object.fromEntries(
        Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => [name, type === 'Double' ? 4 : 2]),
      );
      expect(customAttributes).toMatchObject(expected);
      expect(Object.keys(expected).sort()).toEqual([
        'BuyerEmail',
        'DealAmount',
        'DealStatus',
        'ExternalId',
        'MarketplaceId',
      ]);
    } finally {
      await connection.close();
    }
  });
});
