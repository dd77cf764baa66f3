// The few exports of OpenCode's own solid-js and @opentui/solid that the terminal UI module uses,
// under the names OpenCode registers them as (its runtime plugin's virtual modules): the bundle
// keeps them external, they are not dependencies of the package, and these declarations only type
// them.

declare module "opentui:runtime-module:solid-js" {
  export type Accessor<T> = () => T;
  export type Setter<T> = (v: T | ((prev: T) => T)) => T;
  export function createSignal<T>(value: T, options?: { equals?: false | ((a: T, b: T) => boolean) }): [Accessor<T>, Setter<T>];
  export function createComponent<P>(comp: (props: P) => unknown, props: P): unknown;
  export function onCleanup(fn: () => void): void;
  export function Index<T>(props: { each: readonly T[] | undefined; children: (item: Accessor<T>, index: number) => unknown }): unknown;
  export function Show<T>(props: { when: T | undefined | null | false; children: unknown; fallback?: unknown }): unknown;
}

declare module "opentui:runtime-module:%40opentui%2Fsolid" {
  export function createElement(tag: string): unknown;
  export function insert(parent: unknown, value: unknown): void;
  export function setProp<T>(node: unknown, name: string, value: T, prev?: T): T;
  export function effect<T>(fn: (prev?: T) => T, init?: T): void;
}
