/** @jsxImportSource preact */
// The dashboard's entry: mounts the page and starts reading the API.

import { render } from "preact";
import { App } from "./app";
import { start } from "./store";

render(<App />, document.getElementById("app")!);
void start();
