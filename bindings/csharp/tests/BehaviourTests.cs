// This binding against tests/fixtures/binding_behaviour.json, the table every
// binding's suite checks (issue #49.6), and duplicate registration (#49.5).
using System;
using System.Collections.Generic;
using Capstan;

internal static partial class Tests
{
    private static Dictionary<string, object> Mistake(Dictionary<string, object> table, string name)
    {
        foreach (var row in Arr(table["errors"])) if ((string)Obj(row)["mistake"] == name) return Obj(row);
        throw new Exception("no row " + name);
    }

    private static Registry WithOld()
    {
        var reg = new Registry();
        reg.AddTool("f", "", AnyArgs, call => "old");
        return reg;
    }

    private static void Behaviour()
    {
        var table = Obj(Json.Parse(Fixture("binding_behaviour.json")));

        Run("behaviour table: every canonical format has its code", () =>
        {
            int canonical = 0;
            foreach (var o in Arr(table["formats"]))
            {
                var row = Obj(o);
                if (!row.ContainsKey("canonical") || !(bool)row["canonical"]) continue; // C# takes a Format, not a name
                canonical++;
                var name = ((string)row["name"]).Replace("_", "");
                var f = (Format)Enum.Parse(typeof(Format), name, true);
                Check((long)(uint)f == (long)row["code"], name);
            }
            Check(canonical == Enum.GetValues(typeof(Format)).Length, "a Format without its row");
        });

        Run("behaviour table: a call without an id gets the table's id", () =>
        {
            using (var reg = WithOld())
                foreach (var o in Arr(table["ids"]))
                {
                    var row = Obj(o);
                    int index = (int)(long)row["index"];
                    var calls = new List<string>();
                    for (int i = 0; i <= index; i++) calls.Add("{\"name\":\"f\"}");
                    var id = reg.Execute("[" + string.Join(",", calls) + "]")[index].Id;
                    Check(id == (string)row["id"], id);
                }
        });

        Run("behaviour table: a second registration is refused naming the tool; ToolFlags.Replace runs the new handler", () =>
        {
            var row = Mistake(table, "duplicate_registration");
            using (var reg = WithOld())
            {
                var e = Throws<CapstanException>(() => reg.AddTool("f", "", AnyArgs, call => "new"), "a second f");
                Check(e.Status == (string)row["status"], e.Status);
                Check(e.Message.Contains((string)row["fragment"]) && e.Message.Contains("\"f\""), e.Message);
                Check(reg.Execute("{\"name\":\"f\"}")[0].Content == "old", "the old tool");
                reg.AddTool("f", "", AnyArgs, call => "new", ToolFlags.Replace);
                Check(reg.Execute("{\"name\":\"f\"}")[0].Content == "new", "the new tool");
            }
        });

        Run("behaviour table: call mistakes end with the table's outcome and words", () =>
        {
            using (var reg = WithOld())
                foreach (var name in new[] { "unknown_tool", "arguments_not_json", "arguments_not_object" })
                {
                    var row = Mistake(table, name);
                    var call = name == "unknown_tool" ? "{\"id\":\"a\",\"name\":\"nope\"}"
                        : "{\"id\":\"a\",\"name\":\"f\",\"arguments\":" + MethodTools.JsonValue((string)row["arguments"]) + "}";
                    var r = reg.Execute(call)[0];
                    Check(r.Outcome == (string)row["outcome"] && r.Content.Contains((string)row["fragment"]), name + ": " + r.Content);
                    if (row.ContainsKey("names_tool")) Check(r.Content.Contains("nope"), r.Content);
                }
        });

        Run("behaviour table: an unknown format and a provider-shaped call throw the table's status", () =>
        {
            using (var reg = WithOld())
            {
                var row = Mistake(table, "unknown_format");
                var e = Throws<CapstanException>(() => reg.ToolsJson((Format)99), "format 99");
                Check(e.Status == (string)row["status"] && e.Message.Contains((string)row["fragment"]), e.Message);
                row = Mistake(table, "provider_shaped_call");
                var call = "[" + MethodTools.JsonValue(row["call"]) + "]";
                e = Throws<CapstanException>(() => reg.Execute(call), "a provider's call");
                Check(e.Status == (string)row["status"] && e.Message.Contains((string)row["fragment"]), e.Message);
            }
        });
    }
}
