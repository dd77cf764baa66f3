// asyncagents in OpenCode's terminal UI: the "Background tasks" section of the session sidebar,
// the running count beside the prompt, and /tasks. A module of its own (package.json
// exports["./tui"], loaded from tui.json): OpenCode takes a module as either the server part or
// the TUI part. It reads the plugin's status API and draws what the core says (core/view).
// OpenCode's TUI plugin API will change with OpenCode 2; this folder is all that depends on it.

import { createComponent, createSignal, onCleanup } from "opentui:runtime-module:solid-js";
import type { TuiPlugin, TuiPluginApi, TuiPluginModule } from "@opencode-ai/plugin/tui";
import { VIEW_COMMAND_DESCRIPTION, VIEW_COMMAND_SLASH, VIEW_TITLE, VIEW_UNAVAILABLE, type ViewList, type ViewRow } from "../../bridge/types";
import { sectionView, summaryView } from "./draw";
import { Views } from "./views";

const ID = "asyncagents";
const LIST_COMMAND = "asyncagents.tasks";
const CANCEL_COMMAND = "asyncagents.tasks.cancel";

const tui: TuiPlugin = async (api) => {
  const views = new Views(api.lifecycle.signal, (m) => console.error(m));
  const section = (sessionID: string) => {
    const get = views.watch(sessionID);
    onCleanup(() => views.release(sessionID));
    return get;
  };
  api.slots.register({
    slots: {
      sidebar_content(_ctx: unknown, props: { session_id: string }) {
        return sectionView(api, section(props.session_id), views.noServer) as never;
      },
      session_prompt_right(_ctx: unknown, props: { session_id: string }) {
        return summaryView(api, section(props.session_id)) as never;
      },
    },
  } as never);
  const off = api.keymap.registerLayer({
    commands: [
      {
        name: LIST_COMMAND,
        title: VIEW_TITLE,
        desc: VIEW_COMMAND_DESCRIPTION,
        category: "Session",
        namespace: "palette",
        slashName: VIEW_COMMAND_SLASH,
        run: () => void openList(api, views),
      },
    ],
  } as never) as unknown as () => void;
  api.lifecycle.onDispose(off);
};

/**
 * The /tasks dialog: every task of the project, newest first, kept fresh while it is open. The
 * filter is the core's: the dialog's own sorts by match, not by age, and a list read again could
 * then come in another order under the highlight.
 */
async function openList(api: TuiPluginApi, views: Views): Promise<void> {
  const client = views.api;
  let list: ViewList | undefined;
  try {
    list = await client?.list();
  } catch {
    list = undefined;
  }
  if (!client || !list) {
    api.ui.toast({ variant: "warning", message: VIEW_UNAVAILABLE });
    return;
  }
  const [rows, setRows] = createSignal<ViewList>(list);
  let current: ViewRow | undefined = list.rows[0];
  let query = "";
  let asked = 0;
  const read = () => {
    const n = ++asked;
    void client.list(query).then(
      (l) => {
        if (n !== asked) return; // a later filter's answer wins
        setRows(l);
        current = l.rows.find((r) => r.id === current?.id) ?? l.rows[0];
      },
      () => {},
    );
  };
  const offChange = views.onChange(read);
  views.setLive(true);
  const offKeys = api.keymap.registerLayer({
    commands: [{ name: CANCEL_COMMAND, run: () => confirmCancel() }],
    bindings: [{ key: list.cancelKey, cmd: CANCEL_COMMAND }],
  } as never) as unknown as () => void;
  let open = true;
  const closed = () => {
    if (!open) return;
    open = false;
    offChange();
    offKeys();
    views.setLive(false);
  };
  const confirmCancel = () => {
    const row = current;
    const l = rows();
    if (!row?.cancel) return;
    closed();
    // A select, not DialogConfirm: 1.18's confirm dialog names its buttons "Cancel" and "Confirm",
    // which for a cancel read backwards. The safe answer comes first and is the default.
    api.ui.dialog.replace(
      () =>
        createComponent(api.ui.DialogSelect<string>, {
          title: row.cancel!,
          options: [
            { title: l.cancelKeep, value: "keep" },
            { title: l.cancelConfirm, value: "cancel" },
          ],
          skipFilter: true,
          onSelect: (o: { value: string }) => {
            if (o.value !== "cancel") return void openList(api, views);
            void client.cancel(row.id, l.cancelReason).then((err) => {
              if (err) api.ui.toast({ variant: "error", message: err });
              void openList(api, views);
            });
          },
        }) as never,
      () => {},
    );
  };
  api.ui.dialog.replace(
    () =>
      createComponent(api.ui.DialogSelect<string>, {
        get title() {
          return rows().title;
        },
        get placeholder() {
          return rows().placeholder;
        },
        get options() {
          return rows().rows.map((r) => ({
            title: `${r.mark} ${r.description}`,
            value: r.id,
            description: r.listDetail ?? r.detail,
          }));
        },
        skipFilter: true,
        onFilter: (q: string) => {
          query = q;
          read();
        },
        onMove: (o: { value: string }) => {
          current = rows().rows.find((r) => r.id === o.value);
        },
        onSelect: (o: { value: string }) => {
          const row = rows().rows.find((r) => r.id === o.value);
          closed();
          api.ui.dialog.clear();
          if (row?.sessionID) api.route.navigate("session", { sessionID: row.sessionID });
        },
      }) as never,
    closed,
  );
}

const plugin: TuiPluginModule & { id: string } = { id: ID, tui };
export default plugin;
