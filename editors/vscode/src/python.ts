/**
 * The interpreter chosen in the Python extension (ms-python.python), if it is installed.
 * Its API is read defensively: any failure means "no interpreter", never an error.
 */
import * as vscode from 'vscode';

const PYTHON_EXTENSION = 'ms-python.python';

interface PythonApi {
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand: string[] | undefined };
    onDidChangeExecutionDetails?: vscode.Event<vscode.Uri | undefined>;
  };
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string };
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
}

async function pythonApi(): Promise<PythonApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
  if (!extension) {
    return undefined;
  }
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch {
    return undefined;
  }
}

export function pythonExtensionInstalled(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION) !== undefined;
}

/** The command that runs the chosen interpreter, e.g. `["/venv/bin/python"]`. */
export async function chosenInterpreter(resource?: vscode.Uri): Promise<string[] | undefined> {
  const api = await pythonApi();
  try {
    const command = api?.settings?.getExecutionDetails?.(resource).execCommand;
    if (command && command.length > 0) {
      return command;
    }
    const active = api?.environments?.getActiveEnvironmentPath?.(resource)?.path;
    return active ? [active] : undefined;
  } catch {
    return undefined;
  }
}

/** Calls `listener` when the user chooses another interpreter. */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await pythonApi();
  const event = api?.environments?.onDidChangeActiveEnvironmentPath
    ?? api?.settings?.onDidChangeExecutionDetails;
  return event ? event(() => listener()) : undefined;
}
