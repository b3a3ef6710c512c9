import { MessageLimits } from '../messages/message-limits.js';
import { cut, httpUrl, type MappedEmbed, type MappedPayload } from './slack-payload.js';

/**
 * GitHub webhook deliveries (https://docs.github.com/webhooks/webhook-events-and-payloads) as the
 * execute payload plain execute validates, in the style Discord's GitHub integration made
 * familiar: the sender as the embed's author, a title `[owner/repo] …` linking to the change, a
 * short description, a colour per action. Pure: no Fastify, no Kysely. docs/webhooks.md
 * "GitHub-compatible execute" lists every event and action.
 *
 * Payloads are read defensively (every field may be missing): whatever arrives, the answer is a
 * message or a reason for posting nothing, never an exception.
 */

/** Colours per kind of action (Discord's GitHub palette where it has one). */
export const GithubColors = {
  push: 0x7289da,
  opened: 0x2cbe4e,
  closed: 0xcb2431,
  merged: 0x6f42c1,
  reopened: 0x2cbe4e,
  comment: 0xe68d60,
  approved: 0x2cbe4e,
  changesRequested: 0xcb2431,
  neutral: 0x6a737d,
  release: 0x2cbe4e,
  star: 0xfbca04,
  success: 0x2cbe4e,
  failure: 0xcb2431,
} as const;

/** The name and avatar deliveries are posted under, as Discord does. */
export const GITHUB_USERNAME = 'GitHub';
export const GITHUB_AVATAR_URL = 'https://github.githubassets.com/images/modules/logos_page/GitHub-Mark.png';

/** How many commits of a push are listed (Discord lists the first five). */
export const PUSH_COMMITS_SHOWN = 5;
const BODY_MAX = 500;

export type GithubRendering = { post: true; payload: MappedPayload } | { post: false; reason: string };

type Obj = Record<string, unknown>;

function obj(value: unknown): Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : {};
}

function str(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The first line of a text, for commit messages. */
function firstLine(value: string): string {
  const end = value.indexOf('\n');
  return end === -1 ? value : value.slice(0, end);
}

function ref(value: unknown): string {
  const r = str(value) ?? '';
  return r.replace(/^refs\/(heads|tags)\//, '');
}

interface Context {
  payload: Obj;
  repo: string;
  sender: Obj;
}

function author(sender: Obj): MappedEmbed['author'] | undefined {
  const login = str(sender['login']);
  if (login === undefined) return undefined;
  const url = httpUrl(sender['html_url']);
  const icon = httpUrl(sender['avatar_url']);
  return { name: cut(login, MessageLimits.authorName), ...(url && { url }), ...(icon && { icon_url: icon }) };
}

function embed(ctx: Context, title: string, url: unknown, color: number, description?: string): GithubRendering {
  const e: MappedEmbed = { title: cut(`[${ctx.repo}] ${title}`, MessageLimits.title), color };
  const link = httpUrl(url);
  if (link !== undefined) e.url = link;
  const a = author(ctx.sender);
  if (a !== undefined) e.author = a;
  if (description !== undefined && description.trim() !== '') e.description = cut(description, BODY_MAX);
  return { post: true, payload: { embeds: [e], username: GITHUB_USERNAME, avatar_url: GITHUB_AVATAR_URL } };
}

function skip(reason: string): GithubRendering {
  return { post: false, reason };
}

function actionNotShown(event: string, action: string | undefined): GithubRendering {
  return skip(`${event} action ${action ?? '(none)'} is not posted`);
}

function push(ctx: Context): GithubRendering {
  const p = ctx.payload;
  const commits = Array.isArray(p['commits']) ? p['commits'].map(obj) : [];
  const branch = ref(p['ref']);
  if (p['deleted'] === true) return skip('push deleted a ref (see the delete event)');
  if (commits.length === 0) return skip('push of 0 commits');
  const lines = commits.slice(0, PUSH_COMMITS_SHOWN).map((c) => {
    const id = (str(c['id']) ?? '').slice(0, 7);
    const url = httpUrl(c['url']);
    const message = cut(firstLine(str(c['message']) ?? ''), 50);
    const who = str(obj(c['author'])['username']) ?? str(obj(c['author'])['name']) ?? '';
    const sha = url ? `[\`${id}\`](${url})` : `\`${id}\``;
    return `${sha} ${message}${who ? ` - ${who}` : ''}`;
  });
  if (commits.length > PUSH_COMMITS_SHOWN) lines.push(`… and ${commits.length - PUSH_COMMITS_SHOWN} more`);
  const count = commits.length === 1 ? '1 new commit' : `${commits.length} new commits`;
  const repoName = ctx.repo.includes('/') ? ctx.repo.slice(ctx.repo.indexOf('/') + 1) : ctx.repo;
  const rendered = embed({ ...ctx, repo: `${repoName}:${branch}` }, count, p['compare'], GithubColors.push);
  if (rendered.post) {
    const e = rendered.payload.embeds?.[0];
    if (e) e.description = cut(lines.join('\n'), MessageLimits.description);
  }
  return rendered;
}

function pullRequest(ctx: Context, action: string | undefined): GithubRendering {
  const pr = obj(ctx.payload['pull_request']);
  const label = `#${str(pr['number']) ?? '?'} ${str(pr['title']) ?? ''}`.trim();
  switch (action) {
    case 'opened':
      return embed(ctx, `Pull request opened: ${label}`, pr['html_url'], GithubColors.opened, str(pr['body']));
    case 'reopened':
      return embed(ctx, `Pull request reopened: ${label}`, pr['html_url'], GithubColors.reopened);
    case 'ready_for_review':
      return embed(ctx, `Pull request ready for review: ${label}`, pr['html_url'], GithubColors.opened);
    case 'closed':
      return pr['merged'] === true
        ? embed(ctx, `Pull request merged: ${label}`, pr['html_url'], GithubColors.merged)
        : embed(ctx, `Pull request closed: ${label}`, pr['html_url'], GithubColors.closed);
    default:
      return actionNotShown('pull_request', action);
  }
}

function review(ctx: Context, action: string | undefined): GithubRendering {
  if (action !== 'submitted') return actionNotShown('pull_request_review', action);
  const pr = obj(ctx.payload['pull_request']);
  const r = obj(ctx.payload['review']);
  const state = (str(r['state']) ?? '').toLowerCase();
  const label = `#${str(pr['number']) ?? '?'} ${str(pr['title']) ?? ''}`.trim();
  const [verb, color] =
    state === 'approved'
      ? ['Pull request approved', GithubColors.approved]
      : state === 'changes_requested'
        ? ['Changes requested', GithubColors.changesRequested]
        : ['Pull request review submitted', GithubColors.comment];
  return embed(ctx, `${verb}: ${label}`, r['html_url'] ?? pr['html_url'], color, str(r['body']));
}

function reviewComment(ctx: Context, action: string | undefined): GithubRendering {
  if (action !== 'created') return actionNotShown('pull_request_review_comment', action);
  const pr = obj(ctx.payload['pull_request']);
  const c = obj(ctx.payload['comment']);
  return embed(ctx, `New review comment on pull request #${str(pr['number']) ?? '?'}: ${str(pr['title']) ?? ''}`.trim(), c['html_url'], GithubColors.comment, str(c['body']));
}

function issues(ctx: Context, action: string | undefined): GithubRendering {
  const issue = obj(ctx.payload['issue']);
  const label = `#${str(issue['number']) ?? '?'} ${str(issue['title']) ?? ''}`.trim();
  switch (action) {
    case 'opened':
      return embed(ctx, `Issue opened: ${label}`, issue['html_url'], GithubColors.opened, str(issue['body']));
    case 'closed':
      return embed(ctx, `Issue closed: ${label}`, issue['html_url'], GithubColors.closed);
    case 'reopened':
      return embed(ctx, `Issue reopened: ${label}`, issue['html_url'], GithubColors.reopened);
    default:
      return actionNotShown('issues', action);
  }
}

function issueComment(ctx: Context, action: string | undefined): GithubRendering {
  if (action !== 'created') return actionNotShown('issue_comment', action);
  const issue = obj(ctx.payload['issue']);
  const c = obj(ctx.payload['comment']);
  const kind = issue['pull_request'] !== undefined ? 'pull request' : 'issue';
  return embed(ctx, `New comment on ${kind} #${str(issue['number']) ?? '?'}: ${str(issue['title']) ?? ''}`.trim(), c['html_url'], GithubColors.comment, str(c['body']));
}

function commitComment(ctx: Context, action: string | undefined): GithubRendering {
  if (action !== undefined && action !== 'created') return actionNotShown('commit_comment', action);
  const c = obj(ctx.payload['comment']);
  const sha = (str(c['commit_id']) ?? '').slice(0, 7);
  return embed(ctx, `New comment on commit \`${sha}\``, c['html_url'], GithubColors.comment, str(c['body']));
}

function createOrDelete(ctx: Context, event: 'create' | 'delete'): GithubRendering {
  const kind = str(ctx.payload['ref_type']) ?? 'ref';
  const name = ref(ctx.payload['ref']);
  const repoUrl = obj(ctx.payload['repository'])['html_url'];
  if (event === 'create') {
    const url = typeof repoUrl === 'string' ? `${repoUrl}/tree/${encodeURIComponent(name)}` : undefined;
    return embed(ctx, `New ${kind} created: ${name}`, url, GithubColors.opened);
  }
  return embed(ctx, `${kind.charAt(0).toUpperCase()}${kind.slice(1)} deleted: ${name}`, repoUrl, GithubColors.closed);
}

function fork(ctx: Context): GithubRendering {
  const forkee = obj(ctx.payload['forkee']);
  return embed(ctx, `Fork created: ${str(forkee['full_name']) ?? '?'}`, forkee['html_url'], GithubColors.neutral);
}

function watch(ctx: Context, action: string | undefined): GithubRendering {
  if (action !== 'started') return actionNotShown('watch', action);
  return embed(ctx, 'New star added', obj(ctx.payload['repository'])['html_url'], GithubColors.star);
}

function release(ctx: Context, action: string | undefined): GithubRendering {
  // GitHub sends created, published and released for one release: only published is posted.
  if (action !== 'published') return actionNotShown('release', action);
  const r = obj(ctx.payload['release']);
  const name = str(r['name']) ?? str(r['tag_name']) ?? '?';
  return embed(ctx, `New release published: ${name}`, r['html_url'], GithubColors.release, str(r['body']));
}

function member(ctx: Context, action: string | undefined): GithubRendering {
  if (action !== 'added') return actionNotShown('member', action);
  const m = obj(ctx.payload['member']);
  return embed(ctx, `New collaborator added: ${str(m['login']) ?? '?'}`, m['html_url'], GithubColors.opened);
}

function publicEvent(ctx: Context): GithubRendering {
  return embed(ctx, 'Now open sourced! 🎉', obj(ctx.payload['repository'])['html_url'], GithubColors.opened);
}

function conclusionColor(conclusion: string | undefined): number {
  if (conclusion === 'success') return GithubColors.success;
  if (conclusion === 'failure' || conclusion === 'timed_out' || conclusion === 'startup_failure') return GithubColors.failure;
  return GithubColors.neutral;
}

function checkRun(ctx: Context, action: string | undefined): GithubRendering {
  const run = obj(ctx.payload['check_run']);
  if (action !== 'completed' || str(run['status']) !== 'completed') return skip(`check_run ${action ?? ''} is not completed`.replace('  ', ' '));
  const conclusion = str(run['conclusion']);
  const branch = str(obj(obj(run['check_suite']))['head_branch']);
  return embed(ctx, `Check ${str(run['name']) ?? 'run'} ${conclusion ?? 'completed'}${branch ? ` on ${branch}` : ''}`, run['html_url'] ?? run['details_url'], conclusionColor(conclusion));
}

function checkSuite(ctx: Context, action: string | undefined): GithubRendering {
  const suite = obj(ctx.payload['check_suite']);
  if (action !== 'completed' || str(suite['status']) !== 'completed') return skip(`check_suite ${action ?? ''} is not completed`.replace('  ', ' '));
  const conclusion = str(suite['conclusion']);
  const branch = str(suite['head_branch']);
  const sha = (str(suite['head_sha']) ?? '').slice(0, 7);
  const repoUrl = str(obj(ctx.payload['repository'])['html_url']);
  return embed(ctx, `CI suite ${conclusion ?? 'completed'}${branch ? ` on ${branch}` : ''}`, repoUrl && sha ? `${repoUrl}/commit/${str(suite['head_sha'])}` : repoUrl, conclusionColor(conclusion), sha ? `Commit \`${sha}\`` : undefined);
}

function discussion(ctx: Context, action: string | undefined): GithubRendering {
  const d = obj(ctx.payload['discussion']);
  const label = `#${str(d['number']) ?? '?'} ${str(d['title']) ?? ''}`.trim();
  switch (action) {
    case 'created':
      return embed(ctx, `New discussion: ${label}`, d['html_url'], GithubColors.opened, str(d['body']));
    case 'answered':
      return embed(ctx, `Discussion answered: ${label}`, obj(ctx.payload['answer'])['html_url'] ?? d['html_url'], GithubColors.approved);
    default:
      return actionNotShown('discussion', action);
  }
}

function discussionComment(ctx: Context, action: string | undefined): GithubRendering {
  if (action !== 'created') return actionNotShown('discussion_comment', action);
  const d = obj(ctx.payload['discussion']);
  const c = obj(ctx.payload['comment']);
  return embed(ctx, `New comment on discussion #${str(d['number']) ?? '?'}: ${str(d['title']) ?? ''}`.trim(), c['html_url'], GithubColors.comment, str(c['body']));
}

function workflowRun(ctx: Context, action: string | undefined): GithubRendering {
  const run = obj(ctx.payload['workflow_run']);
  if (action !== 'completed') return skip(`workflow_run ${action ?? '(none)'} is not completed`);
  const conclusion = str(run['conclusion']);
  const branch = str(run['head_branch']);
  const name = str(run['name']) ?? str(obj(ctx.payload['workflow'])['name']) ?? 'Workflow';
  return embed(ctx, `Workflow ${name} ${conclusion ?? 'completed'}${branch ? ` on ${branch}` : ''}`, run['html_url'], conclusionColor(conclusion), str(run['display_title']));
}

/** The events this route renders, for docs and tests. */
export const GITHUB_EVENTS = [
  'push',
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment',
  'issues',
  'issue_comment',
  'commit_comment',
  'create',
  'delete',
  'fork',
  'watch',
  'release',
  'member',
  'public',
  'check_run',
  'check_suite',
  'discussion',
  'discussion_comment',
  'workflow_run',
] as const;

/**
 * Renders one delivery: `event` is X-GitHub-Event, `body` the parsed JSON. `ping` and unknown
 * events post nothing, with the reason; so do actions that carry nothing worth posting.
 */
export function renderGithubEvent(event: string | undefined, body: unknown): GithubRendering {
  if (event === undefined || event === '') return skip('no X-GitHub-Event header');
  if (event === 'ping') return skip('ping');
  const payload = obj(body);
  const repository = obj(payload['repository']);
  const repo = str(repository['full_name']) ?? str(obj(payload['organization'])['login']) ?? 'GitHub';
  const ctx: Context = { payload, repo, sender: obj(payload['sender']) };
  const action = str(payload['action']);
  switch (event) {
    case 'push':
      return push(ctx);
    case 'pull_request':
      return pullRequest(ctx, action);
    case 'pull_request_review':
      return review(ctx, action);
    case 'pull_request_review_comment':
      return reviewComment(ctx, action);
    case 'issues':
      return issues(ctx, action);
    case 'issue_comment':
      return issueComment(ctx, action);
    case 'commit_comment':
      return commitComment(ctx, action);
    case 'create':
    case 'delete':
      return createOrDelete(ctx, event);
    case 'fork':
      return fork(ctx);
    case 'watch':
      return watch(ctx, action);
    case 'release':
      return release(ctx, action);
    case 'member':
      return member(ctx, action);
    case 'public':
      return publicEvent(ctx);
    case 'check_run':
      return checkRun(ctx, action);
    case 'check_suite':
      return checkSuite(ctx, action);
    case 'discussion':
      return discussion(ctx, action);
    case 'discussion_comment':
      return discussionComment(ctx, action);
    case 'workflow_run':
      return workflowRun(ctx, action);
    default:
      return skip(`event ${cut(event, 64)} is not posted`);
  }
}
