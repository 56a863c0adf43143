// The engine's floor for a deal change, run by bench/deals.ts on its own worker: an Update whose handler runs one
// local activity that POSTs to the bench's receiver. A deal's approval does this and more (the records' write, the
// rules); what it costs beyond this is ours. The same workflow, given `updates` and `postOnStart`, is the floor for a
// whole lifecycle: a start whose first task runs a local activity (a deal's provisions its parties) and five Updates.
import { condition, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';

/** The receiver's URL, and the event name the POST carries. */
export const floorUpdate = defineUpdate<void, [string, string?]>('floor');

const { postToReceiver } = proxyLocalActivities<{
  postToReceiver(url: string, workflowId: string, event: string): Promise<void>;
}>({ startToCloseTimeout: '10s' });

export async function benchFloorWorkflow(
  workflowId: string,
  options: { updates?: number; postOnStart?: string } = {},
): Promise<void> {
  let posted = 0;
  setHandler(floorUpdate, async (url, event = 'floor') => {
    await postToReceiver(url, workflowId, event);
    posted++;
  });
  if (options.postOnStart) await postToReceiver(options.postOnStart, workflowId, 'start');
  await condition(() => posted >= (options.updates ?? 1));
}
