// DATA_DIR under a folder only its owner may enter: started as root, PostgreSQL runs as "postgres" and cannot reach
// it, so the start names the folder and says what to do instead of initdb's bare "Permission denied".
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closedFolderMessage, closedFolderOnTheWay } from '../../src/dev/data-dir.ts';

const root = mkdtempSync(path.join(tmpdir(), 'svc-data-dir-'));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));
const rootOwned = () => false; // as if every folder were root's, whoever runs the test

describe('a DATA_DIR PostgreSQL can reach as the postgres user', () => {
  it('names the closed folder on the way, even when DATA_DIR is not made yet', () => {
    const closed = path.join(root, 'private');
    mkdirSync(closed, { mode: 0o700 });
    chmodSync(closed, 0o700);
    expect(closedFolderOnTheWay(path.join(closed, 'svc-data', 'postgres'), rootOwned)).toBe(closed);
    const message = closedFolderMessage(path.join(closed, 'svc-data'), closed);
    expect(message).toContain(`folder ${closed} lets only its owner in (mode 0700)`);
    expect(message).toContain(`chmod o+x ${closed}`);
    expect(message).toContain('DATA_DIR=/var/lib/svc npm start');
  });

  it('passes folders others may enter, and a closed folder the postgres user owns', () => {
    const open = path.join(root, 'open');
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o711);
    expect(closedFolderOnTheWay(path.join(open, 'data', 'postgres'), rootOwned)).toBeUndefined();
    const owned = path.join(root, 'owned');
    mkdirSync(owned, { mode: 0o700 });
    chmodSync(owned, 0o700);
    expect(closedFolderOnTheWay(path.join(owned, 'postgres'), () => true)).toBeUndefined();
    expect(closedFolderOnTheWay(path.join(owned, 'postgres'), rootOwned)).toBe(owned);
  });
});
