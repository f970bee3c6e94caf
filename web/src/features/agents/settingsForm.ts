// The agent's settings schema as form fields, and the form's text back to typed values.
// The hub accepts a small subset of JSON Schema (docs/protocol.md §5.1): a flat object of
// string, number, integer or boolean settings, maybe an enum; this reads only that.

export type FieldKind = "string" | "number" | "integer" | "boolean";

export interface SettingField {
  name: string;
  kind: FieldKind;
  label: string;
  description?: string;
  options?: (string | number | boolean)[];
  required: boolean;
  min?: number;
  max?: number;
  hasDefault: boolean;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function settingFields(schema: Json | null | undefined): SettingField[] {
  if (!schema || !isObject(schema.properties)) return [];
  const required = Array.isArray(schema.required) ? schema.required : [];
  const fields: SettingField[] = [];
  for (const [name, raw] of Object.entries(schema.properties)) {
    if (!isObject(raw)) continue;
    const kind = raw.type;
    if (kind !== "string" && kind !== "number" && kind !== "integer" && kind !== "boolean") continue;
    fields.push({
      name,
      kind,
      label: typeof raw.title === "string" && raw.title ? raw.title : name,
      description: typeof raw.description === "string" ? raw.description : undefined,
      options: Array.isArray(raw.enum) ? (raw.enum as (string | number | boolean)[]) : undefined,
      required: required.includes(name),
      min: typeof raw.minimum === "number" ? raw.minimum : undefined,
      max: typeof raw.maximum === "number" ? raw.maximum : undefined,
      hasDefault: "default" in raw,
    });
  }
  return fields;
}

/** What a field shows for a value: text for inputs and selects, a flag for checkboxes. */
export function toText(value: unknown): string {
  return value === undefined || value === null ? "" : String(value);
}

/** The form's entries as the values to save. An empty text field is left out (the hub
 *  then uses the setting's default); a number that does not read as one is sent as typed,
 *  so the hub's answer names the field. */
export function formValues(fields: SettingField[], entries: Record<string, string | boolean>): Json {
  const values: Json = {};
  for (const f of fields) {
    const entry = entries[f.name];
    if (f.kind === "boolean") {
      values[f.name] = entry === true;
      continue;
    }
    if (typeof entry !== "string" || entry === "") continue;
    if (f.options) {
      const chosen = f.options.find((o) => String(o) === entry);
      values[f.name] = chosen ?? entry;
    } else if (f.kind === "number" || f.kind === "integer") {
      const n = Number(entry.trim());
      values[f.name] = entry.trim() !== "" && Number.isFinite(n) ? n : entry;
    } else {
      values[f.name] = entry;
    }
  }
  return values;
}
