// Determinism: histories recorded from real deal workflows (test/fixtures/deal-histories, one per change of the code
// that open workflows may still be in) replay on today's workflow code, so a change that would break the deals open in
// production fails here first. Guard a changed step with `patched('<change-id>')` (workflows/deals/deal.ts). The
// replay needs no server; a new history is recorded from a real run by the e2e test in test/e2e/deal-workflow.test.ts
// (RECORD_HISTORIES=1). The histories of the time-skipping runs replay in deal-timers.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { installQuietRuntime, workflowBundle } from './support.ts';

const HISTORIES = path.join(import.meta.dirname, '..', 'fixtures', 'deal-histories');

interface HistoryEvent {
  eventType: string;
  activityTaskScheduledEventAttributes?: { activityType: { name: string } };
}

const recorded = readdirSync(HISTORIES)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({
    workflowId: file,
    history: JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')) as { events: HistoryEvent[] },
  }));

let bundle: WorkflowBundle;
beforeAll(async () => {
  installQuietRuntime();
  bundle = await workflowBundle();
});

async function replay(histories: typeof recorded) {
  const results = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) results.push(result);
  return results.map((result) => [result.workflowId, result.error?.message ?? 'ok']);
}

describe('recorded deal histories', () => {
  it('replay on the current workflow code, every one of them', async () => {
    expect(recorded.map(({ workflowId }) => workflowId)).toEqual(
      expect.arrayContaining(['paid.json', 'paid-before-local-records.json', 'paid-before-reassert.json']),
    );
    expect(await replay(recorded)).toEqual(recorded.map(({ workflowId }) => [workflowId, 'ok']));
  });

  it('fail to replay when the code would take another step than the history recorded', async () => {
    // The same history, but its first activity another one than the code schedules there: what a change without a
    // patch looks like to a workflow that is already past that step.
    const { workflowId, history } = recorded.find(({ history }) =>
      history.events.some((event) => event.activityTaskScheduledEventAttributes),
    )!;
    const changed = structuredClone(history);
    changed.events.find(
      (event) => event.activityTaskScheduledEventAttributes,
    )!.activityTaskScheduledEventAttributes!.activityType.name = 'anotherActivity';
    const [[, outcome]] = await replay([{ workflowId, history: changed }]);
    expect(outcome).toMatch(/nondetermin/i);
  });
});
