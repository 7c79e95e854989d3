using System;

namespace Capstan
{
    /// <summary>Marks a method as a tool for <see cref="Registry.AddTools(Type)"/>
    /// (static methods) or <see cref="Registry.AddTools(object)"/> (instance
    /// methods too). Its name is <see cref="Name"/>, or the method's in
    /// snake_case. Under IL2CPP keep such methods from being stripped
    /// (<c>[Preserve]</c> or link.xml): they are reached by reflection.</summary>
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class ToolAttribute : Attribute
    {
        public ToolAttribute(string description = null) { Description = description; }

        /// <summary>What the tool does, for the model.</summary>
        public string Description { get; private set; }

        /// <summary>The tool's name; null = the method's name in snake_case.</summary>
        public string Name { get; set; }

        /// <summary><see cref="ToolFlags"/> of the tool.</summary>
        public ToolFlags Flags { get; set; }

        /// <summary>Per-call timeout in milliseconds; 0 = none.</summary>
        public uint TimeoutMs { get; set; }
    }

    /// <summary>Describes a tool's parameter for the model.</summary>
    [AttributeUsage(AttributeTargets.Parameter | AttributeTargets.Field | AttributeTargets.Property)]
    public sealed class ParamAttribute : Attribute
    {
        public ParamAttribute(string description) { Description = description; }

        /// <summary>What the parameter means.</summary>
        public string Description { get; private set; }
    }
}
