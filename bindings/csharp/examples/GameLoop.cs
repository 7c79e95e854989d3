// A game's frame loop driving capstan, as a Unity MonoBehaviour or a Godot
// Node would (Start/_Ready, Update/_Process): the model's calls are submitted
// without blocking the frame, main-thread tools (which touch the scene) run
// in Pump(), results are polled on the same thread, and the answer for the
// model is written when the last one is in. Run by `make csharp-test`.
using System;
using System.Threading;
using Capstan;

public class Enemies
{
    public int Count;

    // Touches the scene: only ever on the game's thread.
    [Tool("Spawns enemies near the player.", Flags = ToolFlags.MainThread)]
    [Preserve]
    public string SpawnEnemies([Param("How many, 1 to 5.")] int count)
    {
        Count += count;
        return "spawned " + count + ", " + Count + " in the level";
    }

    // Pure: runs on capstan's threads, in parallel with others.
    [Tool("The distance between two points, in metres.")]
    [Preserve]
    public static double Distance(double x1, double y1, double x2, double y2)
    {
        return Math.Sqrt((x2 - x1) * (x2 - x1) + (y2 - y1) * (y2 - y1));
    }
}

public sealed class AgentBehaviour : IDisposable
{
    private readonly Registry registry = new Registry();
    private readonly Enemies enemies = new Enemies();
    private Batch pending;
    public string Answer;

    public void Start()
    {
        registry.AddTools(enemies);
        // registry.ToolsJson(Format.OpenAIChat) goes into the request to the model.
    }

    public void OnModelResponse(string responseJson)
    {
        string calls = Formats.ParseCalls(Format.OpenAIChat, responseJson);
        pending = registry.Submit(calls, new ExecOptions { DeadlineMs = 10000 }, null, Delivery.Poll);
    }

    public void Update()
    {
        registry.Pump(2);                  // main-thread tools, 2 ms of this frame at most
        if (pending == null) return;
        pending.Poll();                    // results, on this thread
        if (!pending.Completion.IsCompleted) return;
        Answer = Formats.WriteResults(Format.OpenAIChat, ToolResult.ToJson(pending.Completion.Result));
        pending.Dispose();
        pending = null;
    }

    public void Dispose()
    {
        if (pending != null) pending.Dispose();
        registry.Dispose();
    }
}

internal static class GameLoop
{
    private static int Main()
    {
        const string response = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":[" +
            "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"spawn_enemies\",\"arguments\":\"{\\\"count\\\":3}\"}}," +
            "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"distance\",\"arguments\":\"{\\\"x1\\\":0,\\\"y1\\\":0,\\\"x2\\\":3,\\\"y2\\\":4}\"}}]}}]}";
        using (var agent = new AgentBehaviour())
        {
            agent.Start();
            agent.OnModelResponse(response);
            for (int frame = 0; agent.Answer == null && frame < 60000; frame++)
            {
                agent.Update();
                Thread.Sleep(1);           // the rest of the frame
            }
            Console.WriteLine(agent.Answer);
            bool ok = agent.Answer != null && agent.Answer.Contains("spawned 3, 3 in the level") && agent.Answer.Contains("\"content\":\"5\"");
            return ok ? 0 : 1;
        }
    }
}
