/**
 * The team tools of `mcp-budget serve`, messages and the continuation inbox (tasks are in
 * `team-task-tools.ts`). Each talks only to the `TeamStore` interface and reads one keyset page
 * at the source; names, arguments and rows are the contract (`specs/agent-mcp-tool-inventory.json`).
 * Channels are created by their first message.
 */
import { z } from 'zod';
import { MAX_CURSOR_CHARS, type CursorCodec } from '../shared/cursor.js';
import { TEAM_INPUT_CAPS, TEAM_PAGE_LIMITS, TEAM_READ_LIMITS } from '../team/index.js';
import { registerTaskTools } from './team-task-tools.js';
import { TEAM_PAGE_FIELDS_BYTES, TeamCursors, cursorRoom, fitItems, iso, messageItem, messageRow, num, pageFields, preview, textWindow, timeKeyOf, timePosition, withTeam } from './team-shapes.js';
import { defineDetailTool, defineListTool, defineMutationTool, defineSearchTool, type ToolContext } from './tool-kinds.js';

const ENTRY = 'src/server/team-tools.ts';

const channelArg = z.string().min(1).max(256).describe('Channel name (a leading # is allowed).');

export function registerTeamTools(ctx: ToolContext, codec: CursorCodec): void {
  const cursors = new TeamCursors(codec);
  // The page less its fields, and at least half the page as task_get takes: a page of 1 KiB or
  // less left no window at all, and a client following body_next_offset (equal to the offset) looped.
  const windowBytes = Math.min(ctx.page.maxPageStringBytes, Math.max(Math.floor(ctx.page.maxPageBytes / 2), ctx.page.maxPageBytes - TEAM_PAGE_FIELDS_BYTES));

  defineMutationTool(ctx, {
    name: 'message_send',
    title: 'Send message',
    action: 'message.send',
    entryPoint: `${ENTRY}#message_send`,
    description: `Post a message to a channel (created by its first message). \`to\` names members whose continuation inbox receives it (at most ${TEAM_INPUT_CAPS.maxRecipients}). Body at most ${TEAM_INPUT_CAPS.maxMessageBytes} bytes; over a cap nothing is written.`,
    args: {
      channel: channelArg,
      body: z.string().describe('Message text.'),
      to: z.array(z.string()).optional().describe('Members to notify through their inbox.'),
      reply_to: z.number().int().positive().optional().describe('Id of the message this answers.'),
    },
    caps: { maxChannelBytes: TEAM_INPUT_CAPS.maxChannelBytes, maxMessageBytes: TEAM_INPUT_CAPS.maxMessageBytes, maxRecipients: TEAM_INPUT_CAPS.maxRecipients, maxNameBytes: TEAM_INPUT_CAPS.maxNameBytes, maxTotalBytes: TEAM_INPUT_CAPS.maxTotalBytes },
    row: {
      paging: 'none',
      per_item_budget: 'receipt: id, channel, time, the recipients',
      backend_query_bound: 'caps checked, recipients and reply_to resolved, then one transaction: channel, message, FTS row (trigger), inbox rows',
      structured_content: 'the receipt object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { id: z.number(), channel: z.string(), created_at: z.string(), delivered_to: z.array(z.string()) },
    run: withTeam(async (a, { store, me }) => {
      const m = await store.sendMessage(me, { channel: a.channel, body: a.body, to: a.to, replyTo: a.reply_to });
      return { id: m.id, channel: m.channel, created_at: iso(m.created_at), delivered_to: [...new Set(a.to ?? [])] };
    }),
  });

  defineListTool(
    ctx,
    {
      name: 'message_history_read',
      title: 'Channel history',
      action: 'message.read',
      entryPoint: `${ENTRY}#message_history_read`,
      description: "Read a channel's messages, newest first (bodies as previews; message_get reads one whole).",
      args: { channel: channelArg },
      limit: { ...TEAM_PAGE_LIMITS.history, overMax: 'refuse' },
      row: {
        paging: 'keyset (created_at, id) read limit+1; the page stops at a byte size the budget never cuts; has_more; signed next_cursor bound to store and channel',
        per_item_budget: `body preview ≤ ${TEAM_READ_LIMITS.previewBytes} bytes with body_truncated`,
        backend_query_bound: 'index (channel_id, created_at DESC, id DESC), LIMIT limit+1 from the cursor; no OFFSET, no count',
        structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
      },
      outputSchema: { channel: z.string(), messages: z.array(messageItem), ...pageFields },
      run: withTeam(async ({ channel, limit, cursor, sizer }, { store }) => {
        const after = cursor === undefined ? undefined : timeKeyOf(cursors.decode('history', store.storeId, channel, cursor));
        const page = await store.history(channel, after, limit);
        const items = page.rows.map((m) => messageRow(m));
        const cursorAt = (r: (typeof page.rows)[number]): string => cursors.encode('history', store.storeId, channel, timePosition(r.created_at, r));
        const sample = page.rows[page.rows.length - 1];
        const n = sample === undefined ? 0 : fitItems(items, sizer, { channel, messages: [], has_more: true, next_cursor: cursorRoom(cursorAt(sample)) }, 'messages');
        const last = page.rows[n - 1];
        const more = page.more || n < page.rows.length;
        return {
          channel,
          messages: items.slice(0, n),
          has_more: more,
          ...(more && last !== undefined ? { next_cursor: cursorAt(last) } : {}),
        };
      }),
    },
    { tool: 'message_search', surface: 'team' },
  );

  defineSearchTool(ctx, {
    name: 'message_search',
    title: 'Search messages',
    action: 'message.read',
    entryPoint: `${ENTRY}#message_search`,
    description: `Find messages by words (all required), best match first (bm25), with a snippet around the match. When more than ${TEAM_READ_LIMITS.searchWindowMatches} messages match, they are ranked in windows of the ${TEAM_READ_LIMITS.searchWindowMatches} newest, newest window first (windowed: true).`,
    args: { channel: channelArg.optional() },
    query: { name: 'q', required: true, maxChars: TEAM_READ_LIMITS.maxQueryChars, description: 'Words to find (required); punctuation and operators are ignored.' },
    limit: { ...TEAM_PAGE_LIMITS.messageSearch, overMax: 'refuse' },
    row: {
      paging: `keyset (window, bm25 exact double, id) read limit+1 among ids ≤ the first page's snapshot; windows of the ${TEAM_READ_LIMITS.searchWindowMatches} newest matches, newest first; a page stops at a window's end or a byte size the budget never cuts; has_more; signed next_cursor bound to store, q and channel`,
      per_item_budget: `snippet ≤ ${TEAM_READ_LIMITS.snippetBytes} bytes; body preview ≤ ${TEAM_READ_LIMITS.previewBytes} bytes`,
      backend_query_bound: `FTS5 MATCH: the window's low id by rowid order (OFFSET ${TEAM_READ_LIMITS.searchWindowMatches} in the doclist, no scoring), bm25 over at most ${TEAM_READ_LIMITS.searchWindowMatches} rows, LIMIT limit+1; at most ${TEAM_READ_LIMITS.searchWindowsPerCall} windows per call; snippet() and rows for the page only`,
      structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { q: z.string(), matches: z.array(messageItem.extend({ score: z.number(), snippet: z.string() })), windowed: z.boolean(), ...pageFields },
    run: withTeam(async ({ query, channel, limit, cursor, sizer }, { store }) => {
      const bind = [query, channel ?? null];
      const pos = cursor === undefined ? undefined : cursors.decode('msearch', store.storeId, bind, cursor);
      const from = pos === undefined ? { hi: await store.lastMessageId() } : { hi: num(pos, 'h'), ...(pos.r === undefined ? {} : { after: { score: num(pos, 'r'), id: num(pos, 'i') } }) };
      const page = await store.searchMessages(query, channel, from, limit);
      const items = page.rows.map((h) => ({ ...messageRow(h), score: h.score, snippet: preview(h.snippet, TEAM_READ_LIMITS.snippetBytes).text }));
      const q = preview(query, 512).text;
      const sample = page.rows[page.rows.length - 1];
      const room = sample === undefined ? '' : cursorRoom(cursors.encode('msearch', store.storeId, bind, { h: page.hi, w: true, r: sample.score, i: sample.id }));
      const n = fitItems(items, sizer, { q, matches: [], windowed: false, has_more: true, next_cursor: room }, 'matches');
      const last = page.rows[n - 1];
      // Cut for bytes: go on after the last row kept, in the same window.
      const next = n < page.rows.length && last !== undefined ? { hi: page.hi, after: { score: last.score, id: last.id } } : page.next;
      return {
        q,
        matches: items.slice(0, n),
        windowed: page.windowed || pos?.w === true,
        has_more: next !== undefined,
        ...(next === undefined ? {} : { next_cursor: cursors.encode('msearch', store.storeId, bind, { h: next.hi, w: page.windowed || pos?.w === true, ...(next.after === undefined ? {} : { r: next.after.score, i: next.after.id }) }) }),
      };
    }),
  });

  defineDetailTool(ctx, {
    name: 'message_get',
    title: 'Get message',
    action: 'message.read',
    entryPoint: `${ENTRY}#message_get`,
    description: 'Read one message whole: its body in windows (continue from body_next_offset while it is not null).',
    args: {
      id: z.number().int().positive().describe('Message id.'),
      offset: z.number().int().min(0).optional().describe('Body offset (UTF-16 units) to start at (default 0).'),
    },
    row: {
      paging: 'body window: offset, body_next_offset (null at the end)',
      per_item_budget: `body window ≤ ${windowBytes} bytes as written (min of the page string bound and the page)`,
      backend_query_bound: 'one row by primary key',
      structured_content: 'the message object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { message: messageItem, body_offset: z.number(), body_next_offset: z.number().nullable() },
    run: withTeam(async ({ id, offset }, { store }) => {
      const m = await store.getMessage(id);
      const w = textWindow(m.body, offset ?? 0, windowBytes);
      return { message: { ...messageRow(m, Number.MAX_SAFE_INTEGER), body: w.text, body_truncated: w.next_offset !== null || w.offset > 0 }, body_offset: w.offset, body_next_offset: w.next_offset };
    }),
  });

  defineListTool(
    ctx,
    {
      name: 'inbox_read',
      title: 'Read inbox',
      action: 'inbox.read',
      entryPoint: `${ENTRY}#inbox_read`,
      description:
        'Read your continuation inbox: messages sent to you, oldest first. Reading marks nothing; pass ack_cursor to inbox_ack once handled. With peek: true no ack_cursor is given.',
      args: { peek: z.boolean().optional().describe('Look without getting an ack_cursor (default false).') },
      limit: { ...TEAM_PAGE_LIMITS.inbox, overMax: 'refuse' },
      cursor: false,
      row: {
        paging: 'the oldest undelivered limit+1 by message id; has_more; signed ack_cursor (through the last message shown) for inbox_ack; no cursor: acking moves the window',
        per_item_budget: `body preview ≤ ${TEAM_READ_LIMITS.previewBytes} bytes with body_truncated`,
        backend_query_bound: 'primary key (member_id, message_id), LIMIT limit+1; a read writes nothing',
        structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
      },
      outputSchema: { messages: z.array(messageItem), has_more: z.boolean(), ack_cursor: z.string().optional() },
      run: withTeam(async ({ peek, limit, sizer }, { store, me }) => {
        const page = await store.readInbox(me, limit);
        const items = page.rows.map((m) => messageRow(m));
        const sample = page.rows[page.rows.length - 1];
        const room = sample === undefined ? '' : cursorRoom(cursors.encode('inbox', store.storeId, me.id, { u: sample.id }));
        const n = fitItems(items, sizer, { messages: [], has_more: false, ack_cursor: room }, 'messages');
        const last = page.rows[n - 1];
        const out: { messages: typeof items; has_more: boolean; ack_cursor?: string } = { messages: items.slice(0, n), has_more: page.more || n < page.rows.length };
        if (peek !== true && last !== undefined) out.ack_cursor = cursors.encode('inbox', store.storeId, me.id, { u: last.id });
        return out;
      }),
    },
    { tool: 'message_search', surface: 'team' },
  );

  defineMutationTool(ctx, {
    name: 'inbox_ack',
    title: 'Acknowledge inbox',
    action: 'inbox.ack',
    entryPoint: `${ENTRY}#inbox_ack`,
    idempotent: true,
    description: 'Mark your inbox delivered through the ack_cursor an inbox_read gave; acking the same cursor again changes nothing.',
    args: { ack_cursor: z.string().max(MAX_CURSOR_CHARS).describe('The ack_cursor of an inbox_read.') },
    caps: { maxCursorChars: MAX_CURSOR_CHARS },
    row: {
      paging: 'none',
      per_item_budget: 'receipt: how many were newly marked, through which id',
      backend_query_bound: 'one transaction: delete the member\'s inbox rows ≤ the id (primary key range), raise its high-water mark',
      structured_content: 'the receipt object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { acked: z.number(), through: z.number() },
    run: withTeam(async ({ ack_cursor }, { store, me }) => {
      const through = num(cursors.decode('inbox', store.storeId, me.id, ack_cursor), 'u');
      return { acked: await store.ackInbox(me, through), through };
    }),
  });

  registerTaskTools(ctx, cursors);
}
