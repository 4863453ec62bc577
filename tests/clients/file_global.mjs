// Debian 12's Node.js is 18: the OpenAI library's file uploads need `File` as a global, which
// Node has from 20 on. Node 18 has the same class in node:buffer, as the library's own message
// suggests. Imported before 'openai' (ES modules run in import order).
import { File } from 'node:buffer';

if (typeof globalThis.File === 'undefined') globalThis.File = File;
