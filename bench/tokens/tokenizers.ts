/**
 * Open tokenizers the estimator is measured against: OpenAI's o200k_base and cl100k_base, the
 * Claude tokenizer Anthropic published, and Llama 3's. Each counts the tokens of a text as the
 * model would read it (no start or end markers).
 */
import { countTokens as claude } from '@anthropic-ai/tokenizer';
import { encode as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import llama3 from 'llama3-tokenizer-js';

export const TOKENIZERS: Readonly<Record<string, (text: string) => number>> = Object.freeze({
  o200k_base: (t: string) => o200k(t).length,
  cl100k_base: (t: string) => cl100k(t).length,
  claude: (t: string) => claude(t),
  llama3: (t: string) => llama3.encode(t, { bos: false, eos: false }).length,
});
