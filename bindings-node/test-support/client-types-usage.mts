// Typed usage of the client typings (index.d.ts -> lib/client.d.ts): every
// public API of the client, type-checked by `make lint-node` (tsc --strict).
// Never run.
import {
  Client,
  Subscription,
  ToolTask,
  LoadedSkill,
  type Skill,
  type TaskState,
  McpError,
  PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  type CallToolResult,
  type Tool,
  type Resource,
  type ResourceTemplate,
  type Prompt,
  type ListToolsResult,
  type ReadResourceResult,
  type GetPromptResult,
  type CompleteResult,
  type DiscoverResult,
  type ProgressUpdate,
  type SubscriptionNotification,
  type StdioClientOptions,
  type HttpClientOptions,
  type ClientOptions,
  Server,
} from 'ferromcp';

export async function usage(): Promise<void> {
  const options: StdioClientOptions = {
    command: 'node',
    args: ['server.mjs'],
    env: { DEBUG: '1' },
    cwd: '/tmp',
    stderr: 'inherit',
    era: 'auto',
    timeout: 5_000,
    name: 'demo',
    version: '1.0.0',
    protocolVersion: PROTOCOL_VERSION,
    onElicitation: async (params) => ({ action: 'accept', content: { name: params.message } }),
    onSampling: (params) => ({
      role: 'assistant',
      content: { type: 'text', text: String(params.maxTokens) },
      model: 'm',
    }),
    onRoots: () => ({ roots: [{ uri: 'file:///r', name: 'r' }] }),
  };
  const stdio: Client = await Client.stdio(options);
  const httpOptions: HttpClientOptions = { headers: { Authorization: 'Bearer x' }, era: 'legacy' };
  const http: Client = await Client.http(new URL('http://127.0.0.1:8000/mcp'), httpOptions);
  const legacy: boolean = LEGACY_PROTOCOL_VERSIONS.includes(http.protocolVersion);
  const detected: boolean | null = stdio.isLegacy;
  void legacy;
  void detected;

  const found: DiscoverResult = await stdio.discover();
  const serverName: string | undefined = found.serverInfo?.name;
  void serverName;

  const page: ListToolsResult = await stdio.listTools({ cursor: 'abc' });
  const next: string | undefined = page.nextCursor;
  const first: Tool | undefined = page.tools[0];
  void next;
  void first;
  for await (const tool of stdio.tools()) {
    const schema: Record<string, unknown> = tool.inputSchema;
    void schema;
  }
  for await (const resource of stdio.resources()) {
    const uri: string = (resource satisfies Resource).uri;
    void uri;
  }
  for await (const template of stdio.resourceTemplates()) {
    const uriTemplate: string = (template satisfies ResourceTemplate).uriTemplate;
    void uriTemplate;
  }
  for await (const prompt of stdio.prompts()) {
    const args = (prompt satisfies Prompt).arguments ?? [];
    void args;
  }
  await stdio.listResources();
  await stdio.listResourceTemplates({});
  await stdio.listPrompts({ cursor: undefined });

  const controller = new AbortController();
  const updates: ProgressUpdate[] = [];
  const result: CallToolResult = await stdio.callTool(
    'add',
    { a: 1, b: 2 },
    { timeout: 1_000, signal: controller.signal, onProgress: (u) => updates.push(u), meta: { trace: 'x' } },
  );
  for (const block of result.content) {
    if (block.type === 'text') {
      const text: string = block.text;
      void text;
    }
  }
  const failed: boolean | undefined = result.isError;
  void failed;

  const read: ReadResourceResult = await stdio.readResource('file:///a');
  const contents = read.contents[0];
  if (contents && 'text' in contents) {
    const text: string = contents.text;
    void text;
  }
  const prompt: GetPromptResult = await stdio.getPrompt('greet', { name: 'x' });
  void prompt.messages[0]?.role;
  const completed: CompleteResult = await stdio.complete({
    ref: { type: 'ref/prompt', name: 'greet' },
    argument: { name: 'name', value: 'a' },
    context: { arguments: { other: 'b' } },
  });
  const values: string[] = completed.completion.values;
  void values;

  const subscription: Subscription = stdio.listen({ toolsListChanged: true, resourceSubscriptions: ['file:///a'] });
  const acknowledged = await subscription.acknowledged();
  void acknowledged.toolsListChanged;
  for await (const note of subscription) {
    const method: string = (note satisfies SubscriptionNotification).method;
    void method;
    break;
  }
  subscription.close();

  try {
    await stdio.callTool('nope');
  } catch (error) {
    if (error instanceof McpError) {
      const code: number = error.code;
      const kind = error.kind;
      void code;
      void kind;
    }
  }
  const withCaps = await Client.http('http://127.0.0.1:8000/mcp', { capabilities: { elicitation: {} }, followTasks: true });
  const task: ToolTask = await withCaps.startToolTask('render', { pages: 2 }, { timeout: 1000 });
  const id: string | null = task.id;
  const state: TaskState | null = await task.refresh();
  if (state?.status === 'input_required') {
    for (const key of Object.keys(state.inputRequests ?? {})) await task.respond({ [key]: { action: 'accept' } });
  }
  await task.cancel();
  const done: CallToolResult = await task.result({
    signal: AbortSignal.timeout(1000),
    onState: (state) => console.log(state.status, state.statusMessage),
  });
  void withCaps.toolTask(id ?? '').state;
  void done;
  for await (const skill of withCaps.skills()) {
    const entry: Skill = await withCaps.getSkill(skill.uri);
    const loaded: LoadedSkill = await withCaps.loadSkill(entry);
    const text: string = loaded.skillMd;
    const bytes: Buffer = await loaded.read('references/A.md');
    void text;
    void bytes;
  }
  const skillPage = await withCaps.listSkills({ cursor: "c" });
  void skillPage.skills.length;
  await withCaps.close();
  await stdio.close();
  await http.close();

  // In memory: a Server of this process, the options that are not a transport's.
  const tested = new Server({ name: 'under-test', version: '1.0.0' });
  tested.tool(
    'add',
    { inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
    ({ a, b }) => a + b,
  );
  const memoryOptions: ClientOptions = {
    era: 'modern',
    timeout: 1000,
    followTasks: true,
    onElicitation: () => ({ action: 'decline' }),
  };
  const memory: Client = await Client.inMemory(tested, memoryOptions);
  const sum: CallToolResult = await memory.callTool('add', { a: 1, b: 2 });
  void sum;
  await memory.close();
  await Client.inMemory(tested);
  // @ts-expect-error: the server must be a Server, not a client or a URL.
  await Client.inMemory('http://127.0.0.1:8000/mcp');
  // @ts-expect-error: an in-memory client has no transport options.
  await Client.inMemory(tested, { headers: { Authorization: 'Bearer x' } });
}
