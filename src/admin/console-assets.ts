// The console's static files, served by us from memory with a long cache: the one small script of its pages (copy
// buttons; the CSP allows scripts from this origin only) and the site's icon. Kept in code so a bundled build needs
// no file beside it.
import type { Api } from '../http/api.ts';

export const CONSOLE_SCRIPT_PATH = '/admin/assets/console.js';

/**
 * Every `<button data-copy-target="ID">` copies the text of the element ID and says so in the page's live region
 * (`#copy-status`) with the button's `data-copied` words. Buttons are hidden until this runs: without scripts the key
 * is plain selectable text.
 */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var status = document.getElementById('copy-status');
  var say = function (text) { if (status) { status.textContent = ''; status.textContent = text; } };
  var select = function (element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  };
  document.querySelectorAll('button[data-copy-target]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy-target'));
    if (!target) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = target.textContent.trim();
      var done = function () { say(button.getAttribute('data-copied')); };
      var fallback = function () {
        select(target);
        var copied = false;
        try { copied = document.execCommand('copy'); } catch (error) { copied = false; }
        say(copied ? button.getAttribute('data-copied') : button.getAttribute('data-copy-failed'));
      };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
      else fallback();
    });
  });
})();
`;

/** A 16×16 icon (ICO with a 32-bit bitmap): a blue rounded square with a white check, the console's accent. */
export function faviconIco(): Buffer {
  const size = 16;
  const pixels = Buffer.alloc(size * size * 4);
  const check = new Set([
    '4,8',
    '5,9',
    '6,10',
    '7,9',
    '8,8',
    '9,7',
    '10,6',
    '11,5',
    '5,8',
    '6,9',
    '7,8',
    '8,7',
    '9,6',
    '10,5',
  ]);
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      const corner = (x === 0 || x === size - 1) && (y === 0 || y === size - 1);
      // Rows are stored bottom-up; (x, y) here is from the top.
      const offset = ((size - 1 - y) * size + x) * 4;
      const white = check.has(`${x},${y}`);
      pixels.writeUInt8(corner ? 0 : white ? 255 : 0xd0, offset); // blue
      pixels.writeUInt8(corner ? 0 : white ? 255 : 0x57, offset + 1); // green
      pixels.writeUInt8(corner ? 0 : white ? 255 : 0x0b, offset + 2); // red
      pixels.writeUInt8(corner ? 0 : 255, offset + 3); // alpha
    }
  const mask = Buffer.alloc(size * 4); // 1 bit a pixel, rows padded to 4 bytes: all drawn (alpha decides)
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(size, 4);
  header.writeInt32LE(size * 2, 8); // the bitmap and its mask
  header.writeUInt16LE(1, 12);
  header.writeUInt16LE(32, 14);
  header.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([header, pixels, mask]);
  const directory = Buffer.alloc(22);
  directory.writeUInt16LE(0, 0);
  directory.writeUInt16LE(1, 2); // an icon
  directory.writeUInt16LE(1, 4); // one image
  directory.writeUInt8(size, 6);
  directory.writeUInt8(size, 7);
  directory.writeUInt16LE(1, 10);
  directory.writeUInt16LE(32, 12);
  directory.writeUInt32LE(image.length, 14);
  directory.writeUInt32LE(22, 18);
  return Buffer.concat([directory, image]);
}

export function consoleAssets(api: Api): void {
  const icon = faviconIco();
  api.router.get(CONSOLE_SCRIPT_PATH, (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = CONSOLE_SCRIPT;
  });
  api.router.get('/favicon.ico', (ctx) => {
    ctx.type = 'image/x-icon';
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = icon;
  });
}
