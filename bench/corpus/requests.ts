/**
 * Requests for the disclosure evaluation, written the way people ask: none names the skill it
 * needs. Each lists the skills that are right for it (any one of them counts as a hit) and the
 * corpus it was written for.
 */

export interface EvalRequest {
  corpus: 'anthropics-skills' | 'openai-skills';
  request: string;
  /** The skills that are right for the request. */
  right: string[];
}

export const REQUESTS: readonly EvalRequest[] = [
  // anthropics-skills
  { corpus: 'anthropics-skills', request: 'can you make some generative art with flow fields and particles that I can tweak with sliders', right: ['algorithmic-art'] },
  { corpus: 'anthropics-skills', request: 'I want a p5.js sketch that draws a different random pattern for every seed', right: ['algorithmic-art'] },
  { corpus: 'anthropics-skills', request: 'make this one-pager look like it came from Anthropic, with the official colors and fonts', right: ['brand-guidelines'] },
  { corpus: 'anthropics-skills', request: 'design a poster for our jazz night and export it as a png', right: ['canvas-design'] },
  { corpus: 'anthropics-skills', request: 'I need a minimalist print-ready art piece for the office wall, a pdf is fine', right: ['canvas-design', 'algorithmic-art'] },
  { corpus: 'anthropics-skills', request: 'how do I turn on prompt caching when I call Sonnet from Python?', right: ['claude-api'] },
  { corpus: 'anthropics-skills', request: "what's the model id for the newest Haiku and how much does it cost per million tokens", right: ['claude-api'] },
  { corpus: 'anthropics-skills', request: "build a landing page for a coffee roastery that doesn't look like every other generic template", right: ['frontend-design', 'web-artifacts-builder'] },
  { corpus: 'anthropics-skills', request: 'the settings screen of our app looks bland, rethink the typography and visual direction', right: ['frontend-design'] },
  { corpus: 'anthropics-skills', request: 'write this week\'s status report for leadership from my notes below', right: ['internal-comms'] },
  { corpus: 'anthropics-skills', request: 'draft a short piece for the company newsletter about the office move', right: ['internal-comms'] },
  { corpus: 'anthropics-skills', request: 'I want to expose our inventory REST API as tools an LLM can call, probably with FastMCP', right: ['mcp-builder'] },
  { corpus: 'anthropics-skills', request: 'set up a model context protocol server in TypeScript so the assistant can query our Postgres database', right: ['mcp-builder'] },
  { corpus: 'anthropics-skills', request: 'help me write a new skill that teaches the agent our deploy process', right: ['skill-creator'] },
  { corpus: 'anthropics-skills', request: "my skill's description never triggers, run some evals and improve it", right: ['skill-creator'] },
  { corpus: 'anthropics-skills', request: 'make me an animated gif of a dancing cat to post in our team Slack channel', right: ['slack-gif-creator'] },
  { corpus: 'anthropics-skills', request: 'apply a consistent color palette and font pairing to this html report', right: ['theme-factory', 'brand-guidelines'] },
  { corpus: 'anthropics-skills', request: 'my slides look inconsistent, pick one of your preset themes and apply it', right: ['theme-factory'] },
  { corpus: 'anthropics-skills', request: 'build a multi-page React artifact with routing, Tailwind and shadcn components', right: ['web-artifacts-builder'] },
  { corpus: 'anthropics-skills', request: 'check that the login form on my local dev server works and take screenshots with Playwright', right: ['webapp-testing'] },
  { corpus: 'anthropics-skills', request: 'the dashboard on localhost:3000 throws errors in the browser console, can you debug it in a real browser', right: ['webapp-testing'] },
  // openai-skills
  { corpus: 'openai-skills', request: 'before we start coding, write up a short plan for adding dark mode', right: ['create-plan'] },
  { corpus: 'openai-skills', request: "plan out how you'd refactor the auth module, don't write any code yet", right: ['create-plan'] },
  { corpus: 'openai-skills', request: 'reviewers left a bunch of comments on my PR, go through them and address each one', right: ['gh-address-comments'] },
  { corpus: 'openai-skills', request: 'respond to the review feedback on the open pull request for this branch', right: ['gh-address-comments'] },
  { corpus: 'openai-skills', request: 'the GitHub Actions checks are red on my pull request, find out why and fix it', right: ['gh-fix-ci'] },
  { corpus: 'openai-skills', request: 'CI keeps failing on the PR, pull the logs and tell me what broke', right: ['gh-fix-ci'] },
  { corpus: 'openai-skills', request: 'create a ticket for the login bug and assign it to the platform team', right: ['linear'] },
  { corpus: 'openai-skills', request: 'which issues are in the current cycle for our team project and who owns them', right: ['linear'] },
  { corpus: 'openai-skills', request: 'save the decisions we made in this chat to our team wiki in Notion', right: ['notion-knowledge-capture'] },
  { corpus: 'openai-skills', request: 'turn these notes into a how-to entry in our knowledge base', right: ['notion-knowledge-capture'] },
  { corpus: 'openai-skills', request: 'I have a call with the design team tomorrow, prepare an agenda and a pre-read from our Notion docs', right: ['notion-meeting-intelligence'] },
  { corpus: 'openai-skills', request: 'get me ready for the quarterly planning meeting: background material tailored to who is attending', right: ['notion-meeting-intelligence'] },
  { corpus: 'openai-skills', request: 'research what our Notion pages say about the pricing experiments and write a brief with citations', right: ['notion-research-documentation'] },
  { corpus: 'openai-skills', request: 'compare the two onboarding proposals scattered across our workspace and summarize them in a report', right: ['notion-research-documentation'] },
  { corpus: 'openai-skills', request: 'take the PRD for the export feature in Notion and break it into implementation tasks', right: ['notion-spec-to-implementation'] },
  { corpus: 'openai-skills', request: 'turn this feature spec into an implementation plan with tasks and track progress', right: ['notion-spec-to-implementation', 'create-plan'] },
  { corpus: 'openai-skills', request: 'I want to teach Codex our internal release workflow as a reusable skill, help me build it', right: ['skill-creator'] },
  { corpus: 'openai-skills', request: 'install the curated spreadsheet skill for me', right: ['skill-installer'] },
  { corpus: 'openai-skills', request: 'grab the lint skill from github.com/acme/agent-tools under skills/lint and set it up in my codex home', right: ['skill-installer'] },
];
