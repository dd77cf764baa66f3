// Drawing the views with OpenCode's renderer, without JSX: JSX in a plugin is compiled only
// outside node_modules, so the package ships plain calls to the functions the compiler would
// have emitted (@opentui/solid's createElement, insert, setProp). Every text drawn here comes
// from the core's view (core/view); this file picks theme colors and lays out boxes.

import { createComponent, Index, Show, type Accessor } from "opentui:runtime-module:solid-js";
import { createElement, effect, insert, setProp } from "opentui:runtime-module:%40opentui%2Fsolid";
import type { TuiPluginApi } from "@opencode-ai/plugin/tui";
import { VIEW_NO_SERVER, VIEW_TITLE, type ViewRow, type ViewSection } from "../../bridge/types";

type Props = Record<string, unknown>;

/** OpenTUI's bold text attribute (TextAttributes.BOLD of @opentui/core). */
const TEXT_BOLD = 1;

/**
 * An element with its props and children. A function prop (other than an on… handler) is
 * reactive: the prop follows it. A function child is reactive too (solid's insert).
 *
 * A reactive prop leaves an element OpenCode has destroyed alone: OpenCode may destroy a slot's
 * elements while the views they follow still change (seen in the real TUI: "TextBuffer is
 * destroyed", which its error boundary turns into a crash screen).
 */
export function h(tag: string, props: Props, ...children: unknown[]): unknown {
  const el = createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === "function" && !/^on[A-Z]/.test(name)) {
      const get = value as () => unknown;
      effect<unknown>((prev) => {
        const next = get();
        if ((el as { isDestroyed?: boolean }).isDestroyed) return prev;
        try {
          return setProp(el, name, next, prev);
        } catch {
          return prev;
        }
      });
    } else {
      setProp(el, name, value);
    }
  }
  for (const child of children) insert(el, child);
  return el;
}

type Theme = TuiPluginApi["theme"]["current"];

/** The theme color of a row's tone. */
export function toneColor(theme: Theme, tone: ViewRow["tone"]): unknown {
  switch (tone) {
    case "accent":
      return theme.primary;
    case "success":
      return theme.success;
    case "error":
      return theme.error;
    case "warning":
      return theme.warning;
    default:
      return theme.textMuted;
  }
}

/** One task: its mark and description, its detail, and its note when it has one. */
function rowView(api: TuiPluginApi, row: Accessor<ViewRow>): unknown {
  const theme = () => api.theme.current;
  return h(
    "box",
    {
      flexDirection: "column",
      onMouseUp: () => {
        const id = row().sessionID;
        if (id) api.route.navigate("session", { sessionID: id });
      },
    },
    h(
      "box",
      { flexDirection: "row" },
      h("text", { fg: () => toneColor(theme(), row().tone), flexShrink: 0, content: () => row().mark + " " }),
      h("text", { fg: () => theme().text, wrapMode: "none", content: () => row().description }),
    ),
    h("text", { fg: () => theme().textMuted, wrapMode: "none", content: () => "  " + row().detail }),
    createComponent(Show, {
      get when() {
        return row().note;
      },
      get children() {
        return h("text", { fg: () => toneColor(theme(), row().tone), wrapMode: "none", content: () => "  " + (row().note ?? "") });
      },
    }),
  );
}

/**
 * The sidebar's "Background tasks" section; nothing while the session has no task. While no
 * plugin server is found (noServer), the section says so and names the fix.
 */
export function sectionView(api: TuiPluginApi, section: Accessor<ViewSection | undefined>, noServer: Accessor<boolean>): unknown {
  const theme = () => api.theme.current;
  const missing = createComponent(Show, {
    get when() {
      return noServer();
    },
    get children() {
      return h(
        "box",
        { flexDirection: "column" },
        h("text", { fg: () => theme().text, attributes: TEXT_BOLD, content: VIEW_TITLE }),
        h("text", { fg: () => theme().warning, content: VIEW_NO_SERVER }),
      );
    },
  });
  const tasks = createComponent(Show, {
    get when() {
      return (section()?.rows.length ?? 0) > 0;
    },
    get children() {
      return h(
        "box",
        { flexDirection: "column" },
        h("text", { fg: () => theme().text, attributes: TEXT_BOLD, content: () => section()?.title ?? "" }),
        createComponent(Index<ViewRow>, {
          get each() {
            return section()?.rows;
          },
          children: (row: Accessor<ViewRow>) => rowView(api, row),
        }),
        createComponent(Show, {
          get when() {
            return section()?.more;
          },
          get children() {
            return h("text", { fg: () => theme().textMuted, content: () => section()?.more ?? "" });
          },
        }),
      );
    },
  });
  return h("box", { flexDirection: "column" }, missing, tasks);
}

/** The count beside the prompt; nothing while nothing runs or waits. */
export function summaryView(api: TuiPluginApi, section: Accessor<ViewSection | undefined>): unknown {
  return createComponent(Show, {
    get when() {
      return section()?.summary;
    },
    get children() {
      return h("text", { fg: () => api.theme.current.textMuted, content: () => section()?.summary ?? "" });
    },
  });
}
