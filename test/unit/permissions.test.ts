// Permission rules (README, Permissions).
import t from 'tap';
import {
  checkKeyPermissions,
  grants,
  GRANTABLE_PERMISSIONS,
  INERT_PERMISSIONS,
  PUBLIC_KEY_PERMISSIONS,
  ROUTE_PERMISSIONS,
} from '../../src/auth/permissions.js';

const ROUTE_NAMES = [
  'events:read', 'events:write', 'people:read', 'people:write', 'people:identify', 'people:delete',
  'campaigns:trigger', 'devices:register', 'devices:read', 'devices:write', 'push:send', 'push:read',
];
const INERT_NAMES = [
  'events:list', 'people:list', 'campaigns:read', 'campaigns:write', 'analytics:read', 'analytics:write',
  'segments:read', 'segments:write', 'webhooks:read', 'webhooks:write', 'workspace:read', 'workspace:write', 'admin',
];

t.test('the permission lists match the documented ones', async (t) => {
  t.same([...ROUTE_PERMISSIONS].sort(), [...ROUTE_NAMES].sort(), 'twelve route permissions');
  t.equal(ROUTE_PERMISSIONS.length, 12);
  t.same([...INERT_PERMISSIONS].sort(), [...INERT_NAMES].sort(), 'thirteen inert names');
  t.equal(INERT_PERMISSIONS.length, 13);
  t.same([...PUBLIC_KEY_PERMISSIONS].sort(), ['devices:register', 'events:write', 'people:identify']);
  t.equal(GRANTABLE_PERMISSIONS.length, 12 + 1 + 13);
  t.ok(GRANTABLE_PERMISSIONS.includes('*'));
});

t.test('grants()', async (t) => {
  t.test('* opens every route', async (t) => {
    for (const p of ROUTE_NAMES) t.equal(grants(['*'], [p]), true, `* grants ${p}`);
    t.equal(grants(['*'], ['push:send', 'push:read']), true);
    t.equal(grants(['admin', '*'], ['people:delete']), true, '* among other names');
  });

  t.test('admin grants nothing', async (t) => {
    for (const p of ROUTE_NAMES) t.equal(grants(['admin'], [p]), false, `admin does not grant ${p}`);
  });

  t.test('inert names grant nothing', async (t) => {
    for (const p of ROUTE_NAMES) t.equal(grants(INERT_NAMES, [p]), false, `inert names do not grant ${p}`);
    t.equal(grants(['people:list'], ['people:read']), false);
    t.equal(grants(['events:list'], ['events:read']), false);
  });

  t.test('any one of the route permissions opens it', async (t) => {
    const identify = ['people:write', 'people:identify'];
    t.equal(grants(['people:identify'], identify), true);
    t.equal(grants(['people:write'], identify), true);
    t.equal(grants(['people:read'], identify), false);
    const register = ['devices:register', 'devices:write'];
    t.equal(grants(['devices:write'], register), true);
    t.equal(grants(['devices:register'], register), true);
    t.equal(grants(['devices:read'], register), false);
    t.equal(grants(['events:write', 'people:read'], ['people:read']), true);
  });

  t.test('no permissions, nothing granted', async (t) => {
    t.equal(grants([], ['events:write']), false);
    t.equal(grants(['events:write'], []), false, 'a route requiring nothing listed is not opened by a plain name');
    t.equal(grants(['*'], []), true, '* opens even that');
  });

  t.test('names are matched exactly', async (t) => {
    t.equal(grants(['people'], ['people:read']), false);
    t.equal(grants(['PEOPLE:READ'], ['people:read']), false);
    t.equal(grants(['people:*'], ['people:read']), false);
  });
});

t.test('checkKeyPermissions(): public keys', async (t) => {
  t.test('omitted or empty permissions get the public default set', async (t) => {
    for (const asked of [undefined, []]) {
      const r = checkKeyPermissions('public', asked);
      t.equal(r.ok, true);
      if (r.ok) t.same([...r.permissions].sort(), ['devices:register', 'events:write', 'people:identify']);
    }
  });

  t.test('every public permission alone, and together', async (t) => {
    for (const p of PUBLIC_KEY_PERMISSIONS) {
      const r = checkKeyPermissions('public', [p]);
      t.same(r, { ok: true, permissions: [p] }, p);
    }
    const all = checkKeyPermissions('public', ['events:write', 'devices:register', 'people:identify']);
    t.same(all, { ok: true, permissions: ['events:write', 'devices:register', 'people:identify'] });
  });

  t.test('a disallowed permission is PUBLIC_KEY_PERMISSION with the allowed list', async (t) => {
    for (const bad of ['push:send', 'push:read', 'people:read', 'people:write', '*', 'admin', 'devices:write', 'campaigns:trigger']) {
      const r = checkKeyPermissions('public', ['events:write', bad]);
      t.equal(r.ok, false, bad);
      if (r.ok) continue;
      t.equal(r.code, 'PUBLIC_KEY_PERMISSION', bad);
      t.same(r.details.disallowed, [bad], `${bad} reported as disallowed`);
      t.same([...(r.details.allowed as string[])].sort(), ['devices:register', 'events:write', 'people:identify'], 'allowed list');
      t.match(r.message, /events:write/, 'message names the allowed permissions');
    }
  });

  t.test('duplicates are removed', async (t) => {
    const r = checkKeyPermissions('public', ['events:write', 'events:write', 'people:identify', 'events:write']);
    t.same(r, { ok: true, permissions: ['events:write', 'people:identify'] });
  });

  t.test('an unknown name is VALIDATION_ERROR, not PUBLIC_KEY_PERMISSION', async (t) => {
    const r = checkKeyPermissions('public', ['events:write', 'nope:nope']);
    t.equal(r.ok, false);
    if (!r.ok) {
      t.equal(r.code, 'VALIDATION_ERROR');
      t.same(r.details.unknown, ['nope:nope']);
    }
  });
});

t.test('checkKeyPermissions(): secret keys', async (t) => {
  t.test('at least one permission is required', async (t) => {
    for (const asked of [undefined, []]) {
      const r = checkKeyPermissions('secret', asked);
      t.equal(r.ok, false);
      if (!r.ok) t.equal(r.code, 'VALIDATION_ERROR');
    }
  });

  t.test('* and every route permission are accepted', async (t) => {
    t.same(checkKeyPermissions('secret', ['*']), { ok: true, permissions: ['*'] });
    const r = checkKeyPermissions('secret', ROUTE_NAMES);
    t.same(r, { ok: true, permissions: ROUTE_NAMES });
  });

  t.test('the thirteen inert names are accepted', async (t) => {
    for (const p of INERT_NAMES) t.same(checkKeyPermissions('secret', [p]), { ok: true, permissions: [p] }, p);
    t.same(checkKeyPermissions('secret', INERT_NAMES), { ok: true, permissions: INERT_NAMES });
  });

  t.test('duplicates are removed, first-seen order kept', async (t) => {
    t.same(checkKeyPermissions('secret', ['people:read', 'events:write', 'people:read', '*', '*']), {
      ok: true,
      permissions: ['people:read', 'events:write', '*'],
    });
  });

  t.test('unknown names are VALIDATION_ERROR listing each unknown name', async (t) => {
    for (const bad of ['people', 'people:*', 'PEOPLE:READ', 'push:write', 'superuser', '', ' events:write']) {
      const r = checkKeyPermissions('secret', ['events:write', bad]);
      t.equal(r.ok, false, JSON.stringify(bad));
      if (!r.ok) {
        t.equal(r.code, 'VALIDATION_ERROR', JSON.stringify(bad));
        t.same(r.details.unknown, [bad]);
      }
    }
    const two = checkKeyPermissions('secret', ['x:y', 'events:write', 'z']);
    t.equal(two.ok, false);
    if (!two.ok) t.same(two.details.unknown, ['x:y', 'z']);
  });
});
