// The Newtonsoft.Json adapter (Capstan.Newtonsoft.dll), under Mono's JIT
// only: a full-AOT run would need Json.NET and every assembly it loads
// AOT-compiled too. Ends with "csharp-newtonsoft: N passed, M failed".
using System;
using System.Collections.Generic;
using Capstan;
using Capstan.NewtonsoftJson;
using Newtonsoft.Json;
using Newtonsoft.Json.Serialization;

public class Order
{
    [JsonProperty("item_name")]
    public string ItemName;
    public int Quantity;
    [JsonIgnore]
    public string Secret;
}

public class Receipt
{
    public string Summary { get; set; }
    public DateTime At { get; set; }
}

public static class Shop
{
    [Tool("Places an order.")]
    public static Receipt PlaceOrder(Order order)
    {
        return new Receipt { Summary = order.Quantity + " x " + order.ItemName + (order.Secret == null ? "" : " LEAKED"), At = new DateTime(2026, 1, 2, 0, 0, 0, DateTimeKind.Utc) };
    }
}

internal static class NewtonsoftTests
{
    private static int passed, failed;

    private static void Run(string name, Action test)
    {
        try { test(); passed++; Console.WriteLine("ok: " + name); }
        catch (Exception e) { failed++; Console.WriteLine("FAILED: " + name + ": " + e); }
    }

    private static void Check(bool ok, string what)
    {
        if (!ok) throw new Exception("check failed: " + what);
    }

    private static int Main()
    {
        Run("the schema, the arguments and the result follow Json.NET's names, ignores and resolver", () =>
        {
            using (var reg = new Registry())
            {
                reg.JsonAdapter = new NewtonsoftJsonAdapter(new JsonSerializerSettings { ContractResolver = new CamelCasePropertyNamesContractResolver() });
                reg.AddTools(typeof(Shop));
                var described = reg.ToolsJson(Format.Describe);
                Check(described.Contains("\"item_name\"") && described.Contains("\"quantity\"") && !described.Contains("Secret") && !described.Contains("secret"), described);
                var r = reg.Execute("[{\"id\":\"1\",\"name\":\"place_order\",\"arguments\":{\"order\":{\"item_name\":\"potion\",\"quantity\":3}}}," +
                    "{\"id\":\"2\",\"name\":\"place_order\",\"arguments\":{\"order\":{\"item_name\":\"potion\",\"quantity\":\"many\"}}}]");
                var ok = (Dictionary<string, object>)Json.Parse(r[0].Content);
                Check(r[0].Outcome == "ok" && (string)ok["summary"] == "3 x potion" && ((string)ok["at"]).StartsWith("2026-01-02T00:00:00"), r[0].Content);
                Check(r[1].Outcome == "invalid_arguments", "checked against the Json.NET-named schema: " + r[1].Content);
            }
        });

        Run("the built-in adapter stays the default and names members as C# does", () =>
        {
            using (var reg = new Registry())
            {
                Check(reg.JsonAdapter == BuiltInJson.Instance, "default");
                reg.AddTools(typeof(Shop));
                var described = reg.ToolsJson(Format.Describe);
                Check(described.Contains("\"ItemName\"") && described.Contains("\"Secret\""), described);
                try { reg.JsonAdapter = null; Check(false, "null accepted"); } catch (ArgumentNullException) { }
            }
        });

        Console.WriteLine("csharp-newtonsoft: " + passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
