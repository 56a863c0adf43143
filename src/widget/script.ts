// GET /widget/marketplace.js: the browser script, written in TypeScript under client/ and bundled with esbuild on the
// first request (then kept in memory for the life of the process), so start-up stays fast and servers that never
// serve it never bundle it. esbuild is a runtime dependency for that reason.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Api } from '../http/api.ts';

export const SCRIPT_PATH = '/widget/marketplace.js';
const ENTRY = fileURLToPath(new URL('./client/index.ts', import.meta.url));

interface Bundle {
  code: string;
  etag: string;
}

let bundled: Promise<Bundle> | undefined;

export function widgetBundle(): Promise<Bundle> {
  bundled ??= build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2019'],
    legalComments: 'none',
    charset: 'utf8',
  }).then(
    (result) => {
      const code = result.outputFiles[0].text;
      return { code, etag: `"${createHash('sha256').update(code).digest('base64url').slice(0, 27)}"` };
    },
    (error: unknown) => {
      bundled = undefined; // let the next request try again
      throw error;
    },
  );
  return bundled;
}

export function widgetScriptRoute(api: Api): void {
  api.router.get(SCRIPT_PATH, async (ctx) => {
    const { code, etag } = await widgetBundle();
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', 'public, max-age=300');
    // Storefronts on other origins load it: helmet's default same-origin resource policy would block the <script>.
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = code;
  });
}
