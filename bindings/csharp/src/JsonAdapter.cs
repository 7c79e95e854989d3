using System;
using System.Reflection;

namespace Capstan
{
    /// <summary>How typed tools (<see cref="ToolAttribute"/> methods) meet
    /// JSON: the binding never forces a JSON library on a project. capstan
    /// has already validated the arguments against the schema when
    /// <see cref="FromJson"/> runs.</summary>
    public interface IJsonAdapter
    {
        /// <summary>One argument, as <see cref="Json.Parse"/> read it
        /// (dictionaries, lists, <c>long</c>, <c>double</c>, <c>string</c>,
        /// <c>bool</c>, <c>null</c>), as a value of <paramref name="type"/>.</summary>
        object FromJson(object parsed, Type type);

        /// <summary>A tool's return value as JSON text.</summary>
        string ToJson(object value);

        /// <summary>The JSON name of a class's field or property, in the
        /// schema and in the arguments; null leaves it out.</summary>
        string NameOf(MemberInfo member);
    }

    /// <summary>The binding's own adapter, with no dependency: members by
    /// their C# names, the conversions of <see cref="MethodTools"/>.</summary>
    public sealed class BuiltInJson : IJsonAdapter
    {
        public static readonly BuiltInJson Instance = new BuiltInJson();

        private BuiltInJson() { }

        public object FromJson(object parsed, Type type)
        {
            return MethodTools.Convert(parsed, type, this);
        }

        public string ToJson(object value)
        {
            return MethodTools.JsonValue(value);
        }

        public string NameOf(MemberInfo member)
        {
            return member.Name;
        }
    }
}
