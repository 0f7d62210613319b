// Bodies the store cannot hold (U+0000, unpaired surrogates) are found, with their path;
// everything else, including escaped backslashes and paired surrogates (emoji), passes.
import t from 'tap';
import { unstorableText } from '../../src/domain/storable-text.js';

const check = (raw: string) => unstorableText(raw, JSON.parse(raw));

t.equal(check('{"a":"x\\u0000y"}'), 'body.a', 'NUL in a value');
t.equal(check('{"a":"z\\ud800"}'), 'body.a', 'lone high surrogate');
t.equal(check('{"a":"\\udc00z"}'), 'body.a', 'lone low surrogate');
t.equal(check('{"a":{"b":["ok","\\uD800"]}}'), 'body.a.b[1]', 'nested, upper-case escape');
t.equal(check('{"k\\u0000":1}'), 'body.k\u0000', 'NUL in a key');
t.equal(check('{"a":"\\ud83d\\ude00"}'), null, 'a surrogate pair (emoji) is fine');
t.equal(check('{"a":"\\\\u0000"}'), null, 'an escaped backslash followed by u0000 is plain text');
t.equal(check('{"a":"plain \\u00e9"}'), null, 'other escapes are fine');
t.equal(check('[1,"x"]'), null, 'arrays without strings to refuse');
