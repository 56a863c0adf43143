// The console's words about roles: in Russian a role is named in Russian ("администратор", not "admin"), in
// English by its name; the home page's greeting names the reader's role that way.
import { describe, expect, it } from 'vitest';
import { consoleTranslator } from '../../src/admin/console-i18n.ts';
import { dealConsoleTranslator } from '../../src/deals/console-i18n.ts';
import { moneyConsoleTranslator } from '../../src/money/console-i18n.ts';
import { ageWords, badge, when } from '../../src/admin/console-kit.ts';

const ROLE_CODE = /\b(admin|arbiter|support)\b/;

describe('role names in the console', () => {
  it('are Russian words in Russian', () => {
    const c = consoleTranslator('ru');
    expect([c('roleName_admin'), c('roleName_arbiter'), c('roleName_support')]).toEqual([
      'администратор',
      'арбитр',
      'поддержка',
    ]);
    for (const key of ['role_admin', 'role_arbiter', 'role_support'] as const) expect(c(key)).not.toMatch(ROLE_CODE);
    expect(c('homeIntro', { email: 'a@example.com', role: c('roleName_admin') })).toBe(
      'Вы вошли как a@example.com, роль: администратор.',
    );
    expect(dealConsoleTranslator('ru')('readOnlyMoney')).not.toMatch(ROLE_CODE);
    expect(dealConsoleTranslator('ru')('readOnlyDisputes')).not.toMatch(ROLE_CODE);
    expect(moneyConsoleTranslator('ru')('runNowAdminsOnly')).not.toMatch(ROLE_CODE);
  });

  it('are the role names in English', () => {
    const c = consoleTranslator('en');
    expect(c('homeIntro', { email: 'a@example.com', role: c('roleName_arbiter') })).toBe(
      'Signed in as a@example.com, role: arbiter.',
    );
  });
});

describe('console pieces', () => {
  it('a badge is its words on a ground of its tone', () => {
    expect(badge('bad', 'failed <5>').value).toBe('<span class="badge badge-bad">failed &#60;5&#62;</span>');
  });

  it('a moment carries its exact instant, and reads in the page language', () => {
    const en = when('en', '2026-11-26T00:45:09.000Z').value;
    expect(en).toContain('datetime="2026-11-26T00:45:09.000Z"');
    expect(en).toContain('title="2026-11-26 00:45:09 UTC"');
    expect(en).toContain('2026');
    expect(when('ru', new Date('2026-11-26T00:45:09.000Z')).value).toContain('нояб');
  });
});

describe('ageWords', () => {
  const minute = 60_000;
  it('names the largest whole unit, in English and with Russian plural forms', () => {
    const cases: [number, string, string][] = [
      [0, '0 minutes', '0 минут'],
      [1 * minute, '1 minute', '1 минута'],
      [3 * minute, '3 minutes', '3 минуты'],
      [59 * minute, '59 minutes', '59 минут'],
      [60 * minute, '1 hour', '1 час'],
      [22 * 60 * minute, '22 hours', '22 часа'],
      [47 * 60 * minute, '47 hours', '47 часов'],
      [48 * 60 * minute, '2 days', '2 дня'],
      [11 * 24 * 60 * minute, '11 days', '11 дней'],
      [21 * 24 * 60 * minute, '21 days', '21 день'],
      [400 * 24 * 60 * minute, '400 days', '400 дней'],
    ];
    for (const [ms, en, ru] of cases) {
      expect(ageWords('en', ms), `${ms} en`).toBe(en);
      expect(ageWords('ru', ms), `${ms} ru`).toBe(ru);
    }
  });
});
