// Helpers for http_curl_test.sh (node only: no python3, no jq on a fresh machine).
//   mask W H X0 Y0 X1 Y1 OUT   RGBA PNG, opaque white with a fully transparent rectangle [X0,X1)x[Y0,Y1)
//   header W H OUT             a tiny RGB PNG that declares W x H (valid CRCs, almost no pixel data)
//   size FILE                  prints WIDTHxHEIGHT from a PNG's IHDR (fails on anything else)
//   json OUT KEY=VALUE...      a JSON object: @path -> the file's base64, numbers stay numbers
//   sse FILE [waiting]         checks a Server-Sent Events capture of one edit (order, steps, done last;
//                              waiting: the first event is before running)
//   openai-sse FILE N WxH      checks an OpenAI image edit stream: N image_edit.partial_image events
//                              (indexes 0..N-1, PNGs), then one image_edit.completed with a WxH PNG
//   eval FILE EXPR             prints EXPR with j = FILE parsed as JSON (strings bare, others as JSON)
import { readFileSync, writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes) => {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4), crc = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
};
const png = (width, height, colourType, rows) => {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, colourType, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr),
                        chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
};
const die = (message) => { console.error(message); process.exit(1); };

const [command, ...args] = process.argv.slice(2);
if (command === 'mask') {
  const [w, h, x0, y0, x1, y1] = args.slice(0, 6).map(Number);
  const rows = Buffer.alloc(h * (1 + 4 * w), 255);
  for (let y = 0; y < h; y++) {
    rows[y * (1 + 4 * w)] = 0;  // filter: none
    for (let x = x0; x < x1 && y >= y0 && y < y1; x++) rows[y * (1 + 4 * w) + 1 + 4 * x + 3] = 0;
  }
  writeFileSync(args[6], png(w, h, 6, rows));
} else if (command === 'header') {
  writeFileSync(args[2], png(Number(args[0]), Number(args[1]), 2, Buffer.alloc(64)));
} else if (command === 'size') {
  const bytes = readFileSync(args[0]);
  if (bytes.length < 24 || bytes.toString('latin1', 1, 4) !== 'PNG' || bytes.toString('latin1', 12, 16) !== 'IHDR')
    die(`${args[0]}: not a PNG (${bytes.length} bytes: ${JSON.stringify(bytes.toString('latin1', 0, 16))})`);
  console.log(`${bytes.readUInt32BE(16)}x${bytes.readUInt32BE(20)}`);
} else if (command === 'json') {
  const body = {};
  for (const pair of args.slice(1)) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at), value = pair.slice(at + 1);
    body[key] = value.startsWith('@') ? readFileSync(value.slice(1)).toString('base64')
              : /^-?[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : value;
  }
  writeFileSync(args[0], JSON.stringify(body));
} else if (command === 'sse') {
  // Events are "event: NAME\nid: N\ndata: JSON" blocks; the stream ends after the done event.
  const rank = { queued: 0, preparing: 1, ready: 2, running: 3, finishing: 4, done: 5 };
  const text = readFileSync(args[0], 'utf8');
  const events = text.split('\n\n').filter((block) => block.trim() && !block.startsWith(':')).map((block) => {
    const event = {};
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) event[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
    }
    if (!event.event || !event.data) die(`an event without event/data: ${JSON.stringify(block)}`);
    event.json = JSON.parse(event.data);
    return event;
  });
  if (events.length < 2) die(`expected the edit's progress then done, got ${events.length} event(s):\n${text}`);
  let last = { rank: -1, step: -1, id: -1 };
  events.forEach((event, i) => {
    const r = rank[event.event], step = event.json.step, id = Number(event.id);
    if (r === undefined) die(`event ${i}: unexpected '${event.event}':\n${text}`);
    if (r < last.rank) die(`event ${i}: '${event.event}' after a later phase:\n${text}`);
    if (step < last.step) die(`event ${i}: step ${step} after step ${last.step}:\n${text}`);
    if (!(id > last.id)) die(`event ${i}: id ${event.id} not above ${last.id}:\n${text}`);
    if (event.json.id !== events[0].json.id) die(`event ${i}: another edit's id:\n${text}`);
    if ((event.event === 'done') !== (i === events.length - 1)) die(`'done' must be the last event, once:\n${text}`);
    last = { rank: r, step, id };
  });
  if (args[1] === 'waiting' && !(rank[events[0].event] < rank.running))
    die(`the first event is '${events[0].event}', not queued, preparing or ready:\n${text}`);
  const done = events[events.length - 1].json;
  if (!done.finished || done.outcome !== 'done') die(`the last event is not a finished, done edit:\n${text}`);
  console.log(events.map((event) => `${event.event}:${event.json.step}`).join(' '));
} else if (command === 'openai-sse') {
  const text = readFileSync(args[0], 'utf8');
  const events = text.split('\n\n').filter((block) => block.trim() && !block.startsWith(':')).map((block) => {
    const name = /^event: (.*)$/m.exec(block)?.[1], data = /^data: (.*)$/m.exec(block)?.[1];
    if (!name || !data) die(`an event without event/data: ${JSON.stringify(block.slice(0, 200))}`);
    const json = JSON.parse(data);
    if (json.type !== name) die(`event '${name}' has type '${json.type}'`);
    const png = Buffer.from(json.b64_json ?? '', 'base64');
    if (png.length < 24 || png.toString('latin1', 12, 16) !== 'IHDR') die(`event '${name}': b64_json is not a PNG`);
    return { name, json, size: `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}` };
  });
  const partials = Number(args[1]);
  if (events.length !== partials + 1) die(`expected ${partials} partial images and the completed one, got ` +
                                          events.map((e) => e.name).join(', '));
  events.slice(0, partials).forEach((event, i) => {
    if (event.name !== 'image_edit.partial_image' || event.json.partial_image_index !== i)
      die(`event ${i}: ${event.name} index ${event.json.partial_image_index}, not partial image ${i}`);
  });
  const completed = events[partials];
  if (completed.name !== 'image_edit.completed' || completed.size !== args[2] || completed.json.size !== args[2] ||
      typeof completed.json.usage !== 'object')
    die(`the last event is ${completed.name} of ${completed.size} (size ${completed.json.size}), not the ${args[2]} result`);
  console.log(events.map((event) => `${event.name}:${event.size}`).join(' '));
} else if (command === 'eval') {
  const j = JSON.parse(readFileSync(args[0], 'utf8'));
  const value = eval(args[1]);  // eslint-disable-line no-eval
  process.stdout.write(typeof value === 'string' ? value : String(JSON.stringify(value)));
} else {
  die(`usage: ${process.argv[1]} mask|header|size|json|sse|openai-sse|eval ...`);
}
