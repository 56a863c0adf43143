// The engine's floor for a deal change, run by bench/deals.ts on its own worker: an Update whose handler runs one
// local activity that POSTs to the bench's receiver. A deal's approval does this and more (the records' write, the
// webhook's own activity); what it costs beyond this is ours.
import { condition, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';

export const floorUpdate = defineUpdate<void, [string]>('floor');

const { postToReceiver } = proxyLocalActivities<{ postToReceiver(url: string, workflowId: string): Promise<void> }>({
  startToCloseTimeout: '10s',
});

export async function benchFloorWorkflow(workflowId: string): Promise<void> {
  let posted = false;
  setHandler(floorUpdate, async (url) => {
    await postToReceiver(url, workflowId);
    posted = true;
  });
  await condition(() => posted);
}
