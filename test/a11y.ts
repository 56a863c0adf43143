// What every page people use must pass in a real browser, whatever it shows: axe-core's checks (WCAG 2.1 A and AA) with
// no serious or critical finding, the reader's language on <html>, nothing wider than a phone's screen, and every
// button and link of the page's content within the screen's width. Failures name the page and the rule, so a
// reader can find the element.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

// The callbacks below run in the page, where these exist; the project's types are Node's.
declare const document: any;
declare const window: any;
declare const getComputedStyle: any;

const require = createRequire(import.meta.url);
/** axe-core's browser bundle; evaluated through the DevTools protocol, so no page's CSP stands in its way. */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface Finding {
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

/** The serious and critical axe findings of the page as it is now. */
export async function axeFindings(page: Page): Promise<Finding[]> {
  const loaded = await page.evaluate(() => 'axe' in window);
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(async () => {
    type Axe = {
      run(
        context: unknown,
        options: object,
      ): Promise<{
        violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
      }>;
    };
    const axe = (window as { axe: Axe }).axe;
    const { violations } = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      resultTypes: ['violations'],
    });
    return violations.map((violation) => ({
      rule: violation.id,
      impact: violation.impact ?? 'unknown',
      help: violation.help,
      targets: violation.nodes.slice(0, 5).map((node) => node.target.map(String).join(' ')),
    }));
  });
  return results.filter((finding) => finding.impact === 'serious' || finding.impact === 'critical');
}

/** How far the page reaches past the screen's width (0 when it fits). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));
}

/** The buttons and links of the page's main content whose box reaches past the screen's right or left edge. */
export function controlsOffScreen(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('main button, main a, main input[type=submit], header button, header a')]
      .filter((element) => {
        const box = element.getBoundingClientRect();
        const style = getComputedStyle(element);
        // Hidden controls (a collapsed <details>, a visually hidden skip link) are not on screen to begin with.
        if (box.width === 0 || box.height === 0 || style.visibility === 'hidden') return false;
        // A control inside a box that scrolls on its own (a wide table) is reached by scrolling that box.
        for (let parent = element.parentElement; parent; parent = parent.parentElement) {
          const overflow = getComputedStyle(parent).overflowX;
          if ((overflow === 'auto' || overflow === 'scroll') && parent.scrollWidth > parent.clientWidth) return false;
        }
        return box.right > window.innerWidth + 1 || box.left < -1;
      })
      .map((element) => `${element.tagName.toLowerCase()} "${(element.textContent ?? '').trim().slice(0, 40)}"`),
  );
}
