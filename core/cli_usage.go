package core

// CLIUsage is what both CLIs (host/cmd/asyncagents, the Go one; cli/, the npm package's under
// Node) print for help and after an unknown command: one text for the same commands.
const CLIUsage = `usage:
  asyncagents ls        [--project DIR] [--wasm FILE]             print the project's tasks as a table
  asyncagents serve     [--project DIR] [--wasm FILE] [--port N]  serve the status API over the stored history
  asyncagents dashboard [--project DIR] [--print]                 open the project's running status API page
                                                                  in the browser (--print: print its URL)
  asyncagents doctor    [--project DIR]                           say whether the plugin loaded, and what to fix
The project is the working directory unless --project (or --dir) names one; a symlink to it is
the same project.`
