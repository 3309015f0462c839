/**
 * A small writer of ONNX models (protobuf through onnx-proto), enough to build test graphs with
 * the input and output names, types and shapes of real exported models.
 */
import onnxProto, { type onnx as Onnx } from 'onnx-proto';

const { onnx } = onnxProto;

export type ElementType = 'float' | 'int32' | 'int64';
export type Dimension = number | string;

const ELEMENT: Record<ElementType, number> = {
  float: onnx.TensorProto.DataType.FLOAT,
  int32: onnx.TensorProto.DataType.INT32,
  int64: onnx.TensorProto.DataType.INT64,
};

export type Attribute = number | number[] | string | { floats: number[] };

interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes?: Record<string, Attribute>;
}

/** Collects nodes, weights and declared inputs/outputs, then encodes one model. */
export class GraphBuilder {
  private readonly nodes: NodeSpec[] = [];
  private readonly initializers: Onnx.ITensorProto[] = [];
  private readonly inputs: Onnx.IValueInfoProto[] = [];
  private readonly outputs: Onnx.IValueInfoProto[] = [];
  private counter = 0;

  constructor(private readonly name: string) {}

  input(name: string, type: ElementType, shape: Dimension[]): string {
    this.inputs.push(valueInfo(name, type, shape));
    return name;
  }

  output(name: string, type: ElementType, shape: Dimension[]): void {
    this.outputs.push(valueInfo(name, type, shape));
  }

  /** A float weight; `values` is filled by the caller (seeded, so files are reproducible). */
  weight(dims: number[], values: Float32Array | number[]): string {
    const name = `w${this.counter++}`;
    this.initializers.push({ name, dims, dataType: ELEMENT.float, floatData: Array.from(values) });
    return name;
  }

  int64s(values: number[]): string {
    const name = `i${this.counter++}`;
    this.initializers.push({ name, dims: [values.length], dataType: ELEMENT.int64, int64Data: values });
    return name;
  }

  /** Adds one node; returns its (first) output name, generated unless given. */
  node(op: string, inputs: string[], attributes: Record<string, Attribute> = {}, outputs?: string[]): string {
    const names = outputs ?? [`t${this.counter++}`];
    this.nodes.push({ op, inputs, outputs: names, attributes });
    return names[0]!;
  }

  encode(opset = 17): Uint8Array {
    const graph = onnx.GraphProto.create({
      name: this.name,
      node: this.nodes.map((spec, index) =>
        onnx.NodeProto.create({
          name: `${spec.op}_${index}`,
          opType: spec.op,
          input: spec.inputs,
          output: spec.outputs,
          attribute: Object.entries(spec.attributes ?? {}).map(([name, value]) => attribute(name, value)),
        }),
      ),
      initializer: this.initializers,
      input: this.inputs,
      output: this.outputs,
    });
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: 'hearth-tests',
      opsetImport: [{ domain: '', version: opset }],
      graph,
    });
    return onnx.ModelProto.encode(model).finish();
  }
}

function valueInfo(name: string, type: ElementType, shape: Dimension[]): Onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: ELEMENT[type],
        shape: { dim: shape.map((dim) => (typeof dim === 'number' ? { dimValue: dim } : { dimParam: dim })) },
      },
    },
  };
}

function attribute(name: string, value: Attribute): Onnx.IAttributeProto {
  const type = onnx.AttributeProto.AttributeType;
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { name, type: type.INT, i: value } : { name, type: type.FLOAT, f: value };
  }
  if (typeof value === 'string') return { name, type: type.STRING, s: new TextEncoder().encode(value) };
  if (Array.isArray(value)) return { name, type: type.INTS, ints: value };
  return { name, type: type.FLOATS, floats: value.floats };
}

/** Deterministic uniform numbers in [-scale, scale) (mulberry32), for weights. */
export function seededValues(count: number, seed: number, scale: number): Float32Array {
  const values = new Float32Array(count);
  let state = seed >>> 0;
  for (let index = 0; index < count; index++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    values[index] = ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1) * scale;
  }
  return values;
}
