/**
 * An incremental JSON tokenizer over bytes that drives a {@link JsonEvents} consumer and honours
 * its decisions (the contract and its ordering rules: events.ts): a value the consumer omits is
 * skipped by a scanner that only tracks strings, escapes and brackets (no events, no strings
 * built), and a closed container's tail is counted without being tokenized. Errors name the byte
 * offset. Chunks may split anything anywhere.
 *
 * Kept values are fully validated (grammar, UTF-8, control characters). Skipped values are checked
 * for balanced brackets, terminated strings and valid UTF-8, not for full grammar: reading what
 * will be thrown away at memory speed is the point of skipping.
 *
 * This file holds the state loop; the class is built in layers: state, input and error offsets
 * (tokenizer-state.ts), skipping (tokenizer-skip.ts), kept strings, numbers and literals
 * (tokenizer-tokens.ts), byte-level rules (json-bytes.ts).
 */
import { describeByte, isWs } from './json-bytes.js';
import { newSkipState } from './skip-scan.js';
import { S } from './tokenizer-state.js';
import { TokenizerTokens } from './tokenizer-tokens.js';

/** The byte tokenizer: feed it with `write`, close it with `end`. */
export class Tokenizer extends TokenizerTokens {
  /** The input ended: anything unfinished is a truncated document. */
  end(): void {
    this.pos = 0;
    this.buf = Buffer.alloc(0);
    if (this.carry !== undefined) this.fail('unexpected end of input inside a string', 0);
    if (this.state === S.Number) this.finishNumber();
    if (this.state !== S.Done) this.fail(this.rootSeen ? 'unexpected end of input (truncated document)' : 'empty input');
  }

  protected run(buf: Buffer): number {
    const n = buf.length;
    let i = 0;
    const ev = this.events;
    while (i < n) {
      switch (this.state) {
        case S.Value:
        case S.ValueOrEnd: {
          const c = buf[i]!;
          if (isWs(c)) {
            i++;
            break;
          }
          this.pos = i;
          if (c === 0x5d && this.state === S.ValueOrEnd) {
            i = this.closeContainer(i, true);
            break;
          }
          if (this.stack.length === 0) {
            if (this.rootSeen) this.fail('unexpected data after the end of the document');
            this.rootSeen = true;
          }
          if (this.state === S.Value && this.stack.length > 0 && ev.canSkipRest === true && this.stack[this.stack.length - 1]) {
            this.startBulk();
            break;
          }
          i = this.startValue(buf, i, c);
          break;
        }
        case S.KeyOrEnd:
        case S.Key: {
          const c = buf[i]!;
          if (isWs(c)) {
            i++;
            break;
          }
          this.pos = i;
          if (c === 0x7d && this.state === S.KeyOrEnd) {
            i = this.closeContainer(i, false);
            break;
          }
          if (c !== 0x22) this.fail(`expected a key string, got ${describeByte(c)}`);
          if (this.state === S.Key && ev.canSkipRest === true) {
            this.startBulk();
            break;
          }
          this.inKey = true;
          this.wanted = true;
          this.keyParts = [];
          this.keyUnits = 0;
          this.state = S.String;
          i++;
          break;
        }
        case S.Colon: {
          const c = buf[i]!;
          if (isWs(c)) {
            i++;
            break;
          }
          if (c !== 0x3a) this.fail(`expected ':' after a key, got ${describeByte(c)}`, i);
          i++;
          this.state = S.Value;
          break;
        }
        case S.After: {
          if (this.stack.length === this.stopDepth) {
            // `writeUntil`: the value ended; what follows is not taken.
            this.halted = true;
            this.pos = i;
            return i;
          }
          const c = buf[i]!;
          if (isWs(c)) {
            i++;
            break;
          }
          this.pos = i;
          const array = this.stack[this.stack.length - 1]!;
          if (c === 0x2c) {
            i++;
            this.state = array ? S.Value : S.Key;
          } else if (c === (array ? 0x5d : 0x7d)) {
            i = this.closeContainer(i, array);
          } else {
            this.fail(`expected ',' or '${array ? ']' : '}'}', got ${describeByte(c)}`);
          }
          break;
        }
        case S.String: {
          const r = this.scanString(buf, i);
          if (r < 0) return -r - 1; // unfinished escape or UTF-8 sequence: carry from there
          i = r;
          break;
        }
        case S.Number:
          i = this.scanNumber(buf, i);
          break;
        case S.Literal:
          i = this.scanLiteral(buf, i);
          break;
        case S.Skip:
        case S.Bulk:
          i = this.scanSkip(buf, i);
          break;
        case S.Done: {
          const c = buf[i]!;
          if (!isWs(c)) this.fail(`unexpected ${describeByte(c)} after the end of the document`, i);
          i++;
          break;
        }
      }
    }
    this.pos = n;
    return n;
  }

  private startValue(buf: Buffer, i: number, c: number): number {
    const ev = this.events;
    if (this.pendingSkipValue) {
      // The member's key was refused: skip its value without telling the consumer.
      this.pendingSkipValue = false;
      if (c === 0x7b || c === 0x5b) return this.beginSkip(i);
      if (c === 0x22) {
        this.skip = newSkipState(false, true);
        this.state = S.Skip;
        return i + 1;
      }
      this.silent = true;
    }
    switch (c) {
      case 0x7b: // {
        if (ev.openObject()) {
          this.stack.push(false);
          this.state = S.KeyOrEnd;
          return i + 1;
        }
        return this.beginSkip(i);
      case 0x5b: // [
        if (ev.openArray()) {
          this.stack.push(true);
          this.state = S.ValueOrEnd;
          return i + 1;
        }
        return this.beginSkip(i);
      case 0x22: // "
        this.pos = i + 1;
        this.inKey = false;
        if (ev.stringStart()) {
          this.wanted = true;
          this.state = S.String;
          return i + 1;
        }
        // Omitted: skip the string as a depth-0 value.
        this.skip = newSkipState(false, true);
        this.state = S.Skip;
        return i + 1;
      case 0x74:
      case 0x66:
      case 0x6e:
        this.literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
        this.tokenText = '';
        this.state = S.Literal;
        return i;
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
          this.tokenText = '';
          this.numberStart = this.base + i;
          this.state = S.Number;
          return i;
        }
        return this.fail(`unexpected ${describeByte(c)} where a value was expected`, i);
    }
  }
}
