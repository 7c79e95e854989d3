// The README's first tool, run by `make csharp-test`: a [Tool] method, the
// tools exported for a provider, one turn of a model's response answered.
using System;
using Capstan;

public enum Unit { Celsius, Fahrenheit }

public static class WeatherTools
{
    [Tool("Current temperature in a city.")]
    public static object GetWeather([Param("The city's name.")] string city, Unit unit = Unit.Celsius)
    {
        return new { city = city, temperature = unit == Unit.Celsius ? 21 : 70, unit = unit };
    }
}

internal static class FirstTool
{
    private static int Main()
    {
        string responseJson = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\"," +
            "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}]}}]}";
        using (var reg = new Registry())
        {
            reg.AddTools(typeof(WeatherTools));                 // get_weather; AddTools(obj) for instance methods
            string tools = reg.ToolsJson(Format.OpenAIChat);    // into the request
            string messages = reg.RunTurn(Format.OpenAIChat, responseJson);  // append to the conversation
            Console.WriteLine(tools);
            Console.WriteLine(messages);
            return tools.Contains("\"get_weather\"") && messages.Contains("Oslo") && messages.Contains("Celsius") ? 0 : 1;
        }
    }
}
