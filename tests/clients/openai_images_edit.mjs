// FlashPS's OpenAI-compatible POST /v1/images/edits driven by the official OpenAI Node library:
// what a user who points `new OpenAI({ baseURL })` at `flashps serve` gets. Prints one line per
// check ("ok: ..." or "FAIL: ...") and exits 1 when any failed.
//
// Environment: FLASHPS_URL (http://127.0.0.1:PORT, required); FLASHPS_API_KEY (the key to send;
// empty: a dummy one, which a loopback server without --api-key-file ignores);
// FLASHPS_API_KEY_REQUIRED=1 (the server was started with --api-key-file: a wrong key must get
// 401); FLASHPS_SAMPLES (the samples folder; default: the repository's).
// Run by run_openai_client_test.sh, which installs the pinned library and starts the server.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

import './file_global.mjs';  // before 'openai': Node 18 (Debian 12) has no global File
import OpenAI, { toFile } from 'openai';

const here = path.dirname(fileURLToPath(import.meta.url));
const samples = process.env.FLASHPS_SAMPLES || path.join(here, '..', '..', 'samples');
const baseUrl = (process.env.FLASHPS_URL || '').replace(/\/+$/, '');
if (!baseUrl) {
  console.error('FLASHPS_URL is not set (e.g. http://127.0.0.1:8188)');
  process.exit(2);
}
const apiKey = process.env.FLASHPS_API_KEY || 'flashps-dummy-key';
const keyRequired = process.env.FLASHPS_API_KEY_REQUIRED === '1';
const imagePath = path.join(samples, 'images', 'autumn.jpg');
const maskPath = path.join(samples, 'masks', 'autumn.png'); // grey: white marks the region to edit

// ---- PNG without dependencies: 8-bit, non-interlaced (what the samples and the server write) ----

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS = { 0: 1, 2: 3, 4: 2, 6: 4 }; // colour type -> channels

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// Chunks with their CRCs checked: { type, data }[].
function pngChunks(bytes) {
  if (bytes.length < 8 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error('not a PNG (no signature)');
  const chunks = [];
  for (let at = 8; at < bytes.length; ) {
    if (at + 12 > bytes.length) throw new Error(`truncated PNG chunk at byte ${at}`);
    const length = bytes.readUInt32BE(at);
    if (at + 12 + length > bytes.length) throw new Error(`truncated PNG chunk at byte ${at}`);
    const typeAndData = bytes.subarray(at + 4, at + 8 + length);
    if (crc32(typeAndData) !== bytes.readUInt32BE(at + 8 + length)) throw new Error(`bad CRC in PNG chunk at byte ${at}`);
    chunks.push({ type: typeAndData.subarray(0, 4).toString('latin1'), data: typeAndData.subarray(4) });
    at += 12 + length;
  }
  return chunks;
}

function pngSize(bytes) {
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE) || bytes.toString('latin1', 12, 16) !== 'IHDR')
    throw new Error('not a PNG with an IHDR first');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

function decodePng(bytes) {
  const chunks = pngChunks(bytes);
  if (chunks[0]?.type !== 'IHDR') throw new Error('the PNG does not start with IHDR');
  const ihdr = chunks[0].data;
  const width = ihdr.readUInt32BE(0), height = ihdr.readUInt32BE(4);
  const depth = ihdr[8], colour = ihdr[9], interlace = ihdr[12];
  const channels = CHANNELS[colour];
  if (depth !== 8 || !channels || interlace !== 0)
    throw new Error(`unsupported PNG (depth ${depth}, colour type ${colour}, interlace ${interlace})`);
  if (chunks.at(-1)?.type !== 'IEND') throw new Error('the PNG does not end with IEND');
  const raw = zlib.inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  const stride = width * channels;
  if (raw.length !== height * (stride + 1)) throw new Error(`PNG data has ${raw.length} bytes, not ${height * (stride + 1)}`);
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels] : 0, b = prev[i], c = i >= channels ? prev[i - channels] : 0;
      let predictor;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) >> 1; break;
        case 4: {
          const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new Error(`bad PNG filter ${filter} on row ${y}`);
      }
      out[i] = (line[i] + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

function pngChunk(type, data) {
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4), crc = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

function encodePng({ width, height, channels, pixels }) {
  const colour = Object.keys(CHANNELS).find((key) => CHANNELS[key] === channels);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = Number(colour);
  const stride = width * channels;
  const raw = Buffer.alloc(height * (stride + 1)); // filter 0 on every row
  for (let y = 0; y < height; y++) pixels.copy(raw, y * (stride + 1) + 1, y * stride, (y + 1) * stride);
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', zlib.deflateSync(raw)),
                        pngChunk('IEND', Buffer.alloc(0))]);
}

// A JPEG's size from its first start-of-frame marker.
function jpegSize(bytes) {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) throw new Error('not a JPEG');
  for (let at = 2; at + 9 < bytes.length; ) {
    if (bytes[at] !== 0xff) throw new Error(`bad JPEG marker at byte ${at}`);
    const marker = bytes[at + 1];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5) };
    at += 2 + bytes.readUInt16BE(at + 2);
  }
  throw new Error('no JPEG start-of-frame marker');
}

// ---- The checks ----

let failures = 0;
// A connection error's causes (fetch failed <- other side closed <- ...), the useful part.
function causes(error) {
  let text = '';
  for (let cause = error?.cause, depth = 0; cause && depth < 4; cause = cause.cause, depth++)
    text += ` <- ${cause.constructor?.name ?? 'cause'}${cause.code ? ` ${cause.code}` : ''}: ${cause.message ?? cause}`;
  return text;
}
async function check(name, body) {
  try {
    const detail = await body();
    console.log(`ok: ${name}${detail ? ` (${detail})` : ''}`);
  } catch (error) {
    failures++;
    const kind = error?.constructor?.name ?? typeof error;
    console.log(`FAIL: ${name}: ${kind}: ${error?.message ?? error}${causes(error)}`);
  }
}
function expect(condition, message) {
  if (!condition) throw new Error(message);
}
// Runs a request that must fail; returns the error it threw.
async function refused(request) {
  let response;
  try {
    response = await request();
  } catch (error) {
    return error;
  }
  throw new Error(`the request succeeded: ${JSON.stringify(response).slice(0, 200)}`);
}
function expectApiError(error, Class, status) {
  expect(error instanceof Class,
         `expected ${Class.name}, got ${error?.constructor?.name}: ${error?.message}${causes(error)}`);
  expect(error instanceof OpenAI.APIError, `${error.constructor.name} is not an OpenAI.APIError`);
  expect(error.status === status, `status ${error.status}, not ${status}`);
  expect(error.error && typeof error.error.message === 'string' && error.error.message.length > 0,
         `no error.message in the body: ${JSON.stringify(error.error)}`);
  expect(typeof error.error.type === 'string' && error.error.type.length > 0, `no error.type: ${JSON.stringify(error.error)}`);
}

const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 0, timeout: 180_000 });

const imageBytes = fs.readFileSync(imagePath);
const input = jpegSize(imageBytes);
const greyMask = decodePng(fs.readFileSync(maskPath));
let editedRegion = 0;
const rgbaMask = (() => {
  // OpenAI's convention: the mask's fully transparent pixels are the region to edit.
  const { width, height, channels, pixels } = greyMask;
  const rgba = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const edit = pixels[i * channels] >= 128;
    editedRegion += edit;
    rgba[i * 4 + 3] = edit ? 0 : 255; // RGB stays black
  }
  return encodePng({ width, height, channels: 4, pixels: rgba });
})();
const image = () => toFile(fs.createReadStream(imagePath), 'autumn.jpg', { type: 'image/jpeg' });
const mask = (bytes = rgbaMask) => toFile(bytes, 'mask.png', { type: 'image/png' });

await check('inputs: the RGBA mask matches the image and marks a region', async () => {
  expect(greyMask.width === input.width && greyMask.height === input.height,
         `mask ${greyMask.width}x${greyMask.height} vs image ${input.width}x${input.height}`);
  expect(editedRegion > 0 && editedRegion < input.width * input.height, `${editedRegion} pixels to edit`);
  const back = decodePng(rgbaMask);
  let transparent = 0;
  for (let i = 3; i < back.pixels.length; i += 4) transparent += back.pixels[i] === 0;
  expect(back.channels === 4 && back.width === input.width && transparent === editedRegion, 'RGBA mask round trip');
  return `${input.width}x${input.height}, ${editedRegion} transparent pixels`;
});

await check('GET /v1/models lists a model (client.models.list)', async () => {
  const page = await client.models.list();
  const ids = page.data.map((model) => model.id);
  expect(ids.length >= 1 && ids.every((id) => typeof id === 'string' && id.length > 0), `ids ${JSON.stringify(ids)}`);
  return ids.join(', ');
});

await check('images.edit b64_json: one PNG of the input size', async () => {
  const started = Date.now();
  const response = await client.images.edit({
    model: 'flashps',
    image: await image(),
    mask: await mask(),
    prompt: 'a red kite',
    n: 1,
    response_format: 'b64_json',
  });
  expect(Array.isArray(response.data) && response.data.length === 1, `data has ${response.data?.length} items`);
  expect(typeof response.model === 'string' && response.model.length > 0, `model ${JSON.stringify(response.model)}`);
  expect(Number.isInteger(response.created) && response.created > 1.5e9, `created ${response.created}`);
  const b64 = response.data[0].b64_json;
  expect(typeof b64 === 'string' && b64.length > 0, 'no b64_json');
  const png = Buffer.from(b64, 'base64');
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE), `bytes start ${png.subarray(0, 8).toString('hex')}, not a PNG`);
  const size = pngSize(png);
  expect(size.width === input.width && size.height === input.height,
         `output ${size.width}x${size.height}, input ${input.width}x${input.height}`);
  const decoded = decodePng(png); // whole file: chunks, CRCs, zlib stream, filters
  expect(decoded.channels === 3 || decoded.channels === 4, `${decoded.channels} channels`);
  if (response.output_format !== undefined)
    expect(response.output_format === 'png', `output_format ${JSON.stringify(response.output_format)}`);
  return `model ${response.model}, ${png.length} bytes, ${Date.now() - started} ms`;
});

await check('images.edit url, n=2: two distinct result URLs that serve PNGs', async () => {
  const response = await client.images.edit({
    model: 'flashps',
    image: await image(),
    mask: await mask(),
    prompt: 'a red kite',
    n: 2,
    response_format: 'url',
  });
  expect(response.data?.length === 2, `data has ${response.data?.length} items`);
  const urls = response.data.map((item) => item.url);
  expect(urls.every((url) => typeof url === 'string' && url.startsWith('http')), `urls ${JSON.stringify(urls)}`);
  expect(urls[0] !== urls[1], `the same URL twice: ${urls[0]}`);
  for (const url of urls) {
    const result = await fetch(url, { headers: { Authorization: `Bearer ${apiKey}` } });
    if (!result.ok) throw new Error(`GET ${url}: HTTP ${result.status} ${(await result.text()).slice(0, 300)}`);
    const png = Buffer.from(await result.arrayBuffer());
    const size = pngSize(png);
    expect(size.width === input.width && size.height === input.height, `${url}: ${size.width}x${size.height}`);
  }
  return urls.map((url) => new URL(url).pathname).join(' ');
});

await check('images.edit n=99: UnprocessableEntityError (422) naming n', async () => {
  const error = await refused(async () =>
    client.images.edit({ model: 'flashps', image: await image(), mask: await mask(), prompt: 'a red kite', n: 99 }));
  expectApiError(error, OpenAI.UnprocessableEntityError, 422);
  expect(error.param === 'n', `param ${JSON.stringify(error.param)}, not "n"`);
  expect(/\bn\b/.test(error.error.message) && error.message.includes('99'), `message ${JSON.stringify(error.message)}`);
  return `${error.code}: ${error.error.message}`;
});

await check('images.edit with a grey mask (no alpha): BadRequestError (400) naming mask', async () => {
  const error = await refused(async () =>
    client.images.edit({ image: await image(), mask: await mask(fs.readFileSync(maskPath)), prompt: 'a red kite' }));
  expectApiError(error, OpenAI.BadRequestError, 400);
  expect(error.param === 'mask', `param ${JSON.stringify(error.param)}, not "mask"`);
  return error.error.message;
});

await check('images.edit with a mask of another size: resized by the SDK like every FlashPS mask (200)', async () => {
  // Fully transparent 16x16: after the resize the whole image is edited.
  const small = encodePng({ width: 16, height: 16, channels: 4, pixels: Buffer.alloc(16 * 16 * 4) });
  const response = await client.images.edit({ image: await image(), mask: await mask(small), prompt: 'x',
                                              response_format: 'b64_json' });
  const size = pngSize(Buffer.from(response.data[0].b64_json, 'base64'));
  expect(size.width === input.width && size.height === input.height,
         `output ${size.width}x${size.height}, input ${input.width}x${input.height}`);
  return `${size.width}x${size.height}`;
});

await check('images.edit stream: true, partial_images: 2: two partial images, then the completed one', async () => {
  const stream = await client.images.edit({ model: 'flashps', image: await image(), mask: await mask(),
                                            prompt: 'a red kite', stream: true, partial_images: 2,
                                            steps: 4 }); // one preview per step at most: enough steps for two
  const partials = [], completed = [];
  for await (const event of stream) {
    if (event.type === 'image_edit.partial_image') partials.push(event);
    else if (event.type === 'image_edit.completed') completed.push(event);
    else throw new Error(`unexpected event ${JSON.stringify(event).slice(0, 200)}`);
  }
  expect(partials.length === 2, `${partials.length} partial images`);
  partials.forEach((event, i) => {
    expect(event.partial_image_index === i, `partial_image_index ${event.partial_image_index}, not ${i}`);
    pngSize(Buffer.from(event.b64_json, 'base64')); // a PNG (a preview of the edited region)
  });
  expect(completed.length === 1, `${completed.length} completed events`);
  const final = completed[0];
  const size = pngSize(Buffer.from(final.b64_json, 'base64'));
  expect(size.width === input.width && size.height === input.height, `completed ${size.width}x${size.height}`);
  expect(final.size === `${input.width}x${input.height}` && final.output_format === 'png',
         `size ${final.size}, output_format ${final.output_format}`);
  expect(Number.isInteger(final.created_at) && typeof final.usage?.total_tokens === 'number',
         `created_at ${final.created_at}, usage ${JSON.stringify(final.usage)}`);
  return `${partials.length} partial, 1 completed (${size.width}x${size.height})`;
});

await check('images.edit stream: true with n=2: BadRequestError (400) naming n, not a plain answer', async () => {
  const error = await refused(async () => {
    const stream = await client.images.edit({ image: await image(), mask: await mask(), prompt: 'x', n: 2, stream: true });
    for await (const event of stream) throw new Error(`an event: ${JSON.stringify(event).slice(0, 100)}`);
  });
  expectApiError(error, OpenAI.BadRequestError, 400);
  expect(error.param === 'n', `param ${JSON.stringify(error.param)}`);
  return error.error.message;
});

// ---- Timeout and retries with an Idempotency-Key ----
// The library sends no Idempotency-Key by itself (its idempotencyHeader is unset in 5.x), but
// per-request headers are the same on each retry: with one, each retry joins the edit the first
// attempt started, so the server computes it once however often the client times out.
const authorization = { Authorization: `Bearer ${apiKey}` };
const getJson = async (route) => {
  const response = await fetch(`${baseUrl}${route}`, { headers: authorization });
  if (!response.ok) throw new Error(`GET ${route}: HTTP ${response.status}`);
  return response.json();
};
// Every edit the server knows, from its submission on (GET /v1/edits).
const listEdits = async () => (await getJson('/v1/edits')).data;
const longEdit = async (extra) => ({ model: 'flashps', image: await image(), mask: await mask(), prompt: 'a red kite',
                                     response_format: 'b64_json', steps: 6, ...extra });

// One request through a client with maxRetries: 2 and `timeout`, an Idempotency-Key on it; what
// the server did meanwhile: the edits it started and the most of them unfinished at once.
async function retriedEdit(timeout) {
  let attempts = 0, timeouts = 0;
  const retrying = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 2, timeout,
                                fetch: (url, init) => {
                                  attempts++;
                                  init?.signal?.addEventListener('abort', () => timeouts++);  // the client's timeout
                                  return fetch(url, init);
                                } });
  const before = new Set((await listEdits()).map((edit) => edit.id));
  const mine = async () => (await listEdits()).filter((edit) => !before.has(edit.id));
  let most = 0, watching = true;
  const watcher = (async () => {
    while (watching) {
      most = Math.max(most, (await mine()).filter((edit) => !edit.finished).length);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  const started = Date.now();
  let answered, failure;
  try {
    const response = await retrying.images.edit(await longEdit({ seed: 2 }),
                                                 { headers: { 'Idempotency-Key': `retry-${process.pid}-${Date.now()}` } });
    answered = Date.now() - started;
    expect(response.data?.[0]?.b64_json?.length > 0, 'no image');
  } catch (error) {
    failure = error;
  }
  // Every edit the attempts started, waited for (also those of attempts the client gave up on).
  for (let waited = 0; (await mine()).some((edit) => !edit.finished) && waited < 120_000; waited += 100)
    await new Promise((resolve) => setTimeout(resolve, 100));
  watching = false;
  await watcher;
  return { attempts, timeouts, answered, failure, most, started: (await mine()).length };
}

await check('images.edit with timeout, maxRetries: 2 and an Idempotency-Key: one edit computing at any moment, '
            + 'computed once', async () => {
  // A timeout shorter than the edit, so the client times out and retries (attempts counted by
  // its fetch); shorter again on a machine where the edit ran faster than measured.
  const started = Date.now();
  await client.images.edit(await longEdit({ seed: 1 }));
  const editMs = Date.now() - started;
  for (const share of [0.7, 0.45, 0.3]) {
    const timeout = Math.round(editMs * share);
    const run = await retriedEdit(timeout);
    if (run.timeouts === 0 && !run.failure) continue;  // answered within the timeout: no retry to judge
    expect(run.most <= 1 && run.started === 1,
           `${run.started} edits started, at most ${run.most} unfinished at once, ${run.attempts} attempts, `
           + `${run.timeouts} timed out`
           + (run.failure ? `; the client: ${run.failure.message}` : ''));
    if (run.failure) throw run.failure;
    return `edit ${editMs} ms, timeout ${timeout} ms, ${run.attempts} attempts (${run.timeouts} timed out), `
           + `answered after ${run.answered} ms, `
           + `at most ${run.most} unfinished at once`;
  }
  throw new Error(`the client never retried: every attempt finished within its timeout (edit ${editMs} ms)`);
});

if (keyRequired) {
  const wrong = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'wrong-key-xxxxxxxxxxxx', maxRetries: 0, timeout: 60_000 });
  await check('wrong API key, models.list: AuthenticationError (401)', async () => {
    const error = await refused(() => wrong.models.list());
    expectApiError(error, OpenAI.AuthenticationError, 401);
    return `${error.code}: ${error.error.message}`;
  });
  // The refusal comes before the server has read the upload: it must still reach the client as a
  // 401, not as a connection reset while the body is being sent (a race, hence the repeats).
  const attempts = 12;
  await check(`wrong API key, images.edit (body sent) x${attempts}: AuthenticationError (401) each time`, async () => {
    const outcomes = {};
    let last;
    for (let i = 0; i < attempts; i++) {
      const error = await refused(async () =>
        wrong.images.edit({ model: 'flashps', image: await image(), mask: await mask(), prompt: 'a red kite' }));
      try {
        expectApiError(error, OpenAI.AuthenticationError, 401);
        expect(error.type === 'authentication_error', `type ${JSON.stringify(error.type)}`);
        last = error;
        outcomes['401'] = (outcomes['401'] ?? 0) + 1;
      } catch (failure) {
        outcomes[failure.message] = (outcomes[failure.message] ?? 0) + 1;
      }
    }
    expect(outcomes['401'] === attempts, `of ${attempts} attempts: ${JSON.stringify(outcomes)}`);
    return `${last.code}: ${last.error.message}`;
  });
  await check('the right API key still works after refusals (models.list)', async () => {
    const page = await client.models.list();
    expect(page.data.length >= 1, 'no models');
  });
}

console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
